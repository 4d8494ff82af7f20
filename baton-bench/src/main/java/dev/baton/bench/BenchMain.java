package dev.baton.bench;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Runs every workload for every subject in one JVM run and writes a markdown table, a JSON file and, for W2,
 * two PNG charts ({@link Charts}).
 *
 * <pre>
 * java -jar baton-bench.jar [--quick] [--out DIR] [--only ID,ID…] [--workloads w0,w1,w2,w3]
 * </pre>
 * Exit status: 0; 1 if a W2 safety column is not zero (two holders at once, or lost updates); 2 if a subject
 * failed to run. Never a speed threshold.
 */
public final class BenchMain {
    /** Settings of one mode. */
    record Mode(String name, int forks, int warmupIterations, double warmupSeconds, int iterations,
                double iterationSeconds, double w2Warmup, double w2Seconds, int[] w3Sizes, int w3Intervals) {
    }

    static final Mode QUICK = new Mode("quick", 0, 1, 0.5, 3, 0.5, 0.5, 2, new int[]{100}, 2);
    static final Mode FULL = new Mode("full", 1, 3, 1, 5, 1, 1, 10, new int[]{1, 100, 1000, 10_000}, 3);

    public static void main(String[] args) throws Exception {
        Mode mode = FULL;
        Path out = Path.of("bench/results");
        Set<String> only = null;
        Set<String> workloads = new TreeSet<>(List.of("w0", "w1", "w2", "w3"));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--quick" -> mode = QUICK;
                case "--out" -> out = Path.of(args[++i]);
                case "--only" -> only = new TreeSet<>(Arrays.asList(args[++i].split(",")));
                case "--workloads" -> workloads = new TreeSet<>(Arrays.asList(args[++i].split(",")));
                default -> {
                    System.err.println("usage: baton-bench [--quick] [--out DIR] [--only ID,ID…] [--workloads w0,w1,w2,w3]");
                    System.exit(64);
                }
            }
        }
        List<Subject> subjects = new ArrayList<>();
        for (Subject s : Subjects.all()) {
            if (only == null || only.contains(s.id())) {
                subjects.add(s);
            }
        }
        Instant started = Instant.now();
        log("mode " + mode.name() + ", " + subjects.size() + " subjects, workloads " + workloads);

        prepare();
        Report report = new Report(mode, started, subjects);
        report.machine = Machine.describe();

        if (workloads.contains("w0")) {
            log("W0 floors");
            report.floors = jmh(FloorBench.class, "floor", Floors.IDS, mode);
        }
        if (workloads.contains("w1")) {
            log("W1 uncontended");
            report.uncontended = jmh(UncontendedBench.class, "subject",
                    subjects.stream().map(Subject::id).toList(), mode);
        }
        if (workloads.contains("w2")) {
            for (Subject s : subjects) {
                log("W2 contended: " + s.id());
                Contended.Result r = Contended.run(s, mode.w2Warmup(), mode.w2Seconds());
                report.contended.add(r);
                log(String.format("  %.0f grants/s, %.0f cross-client/s, max inside %d, counter-grants %d%s",
                        r.grantsPerSecond(), r.crossClientPerSecond(), r.maxInside(), r.unguarded() - r.allGrants(),
                        r.error() == null ? "" : ", ERROR " + r.error()));
            }
        }
        if (workloads.contains("w3")) {
            for (Subject s : subjects) {
                if (!s.manyLocks()) {
                    continue;
                }
                for (int n : mode.w3Sizes()) {
                    log("W3 many locks: " + s.id() + " x " + n);
                    ManyLocks.Result r = ManyLocks.run(s, n, mode.w3Intervals());
                    report.manyLocks.add(r);
                    log(String.format("  connections %d, renewals/interval %.1f, heap/lock %.0f B, acquire all %.0f ms%s",
                            r.connections(), r.renewalsPerInterval(), r.heapBytesPerLock(), r.acquireAllMillis(),
                            r.error() == null ? "" : ", ERROR " + r.error()));
                }
            }
        }
        report.finished = Instant.now();
        Files.createDirectories(out);
        String stamp = started.toString().replace(":", "").replaceAll("\\.\\d+", "");
        Path md = out.resolve(stamp + "-" + mode.name() + ".md");
        Path json = out.resolve(stamp + "-" + mode.name() + ".json");
        String markdown = report.markdown();
        Files.writeString(md, markdown);
        Files.writeString(json, report.json());
        Files.writeString(out.resolve("latest-" + mode.name() + ".md"), markdown);
        Files.writeString(out.resolve("latest-" + mode.name() + ".json"), report.json());
        System.out.println();
        System.out.println(markdown);
        log("wrote " + md + " and " + json);
        try {
            String subtitle = mode.name() + " run of " + started.truncatedTo(ChronoUnit.SECONDS) + ", "
                    + mode.w2Seconds() + " s measured per subject";
            for (Path chart : Charts.write(report.contended, subtitle, out, stamp + "-" + mode.name(),
                    "latest-" + mode.name())) {
                log("wrote " + chart);
            }
        } catch (Exception | LinkageError e) {
            log("cannot draw the W2 charts (the tables above are written): " + e);
        }

        List<String> unsafe = report.contended.stream().filter(r -> r.error() == null && !r.safe())
                .map(Contended.Result::subject).toList();
        List<String> failed = report.failures();
        if (!unsafe.isEmpty()) {
            log("SAFETY VIOLATION (two holders at once or lost updates): " + unsafe);
            System.exit(1);
        }
        if (!failed.isEmpty()) {
            log("FAILED to run: " + failed);
            System.exit(2);
        }
        log("all safety columns zero");
        System.exit(0); // client libraries leave non-daemon threads behind
    }

    static void log(String msg) {
        System.err.println("[bench " + Instant.now().toString().substring(11, 19) + "] " + msg);
    }

    /** Tables and rows every subject needs; idempotent. */
    static void prepare() throws Exception {
        Servers.prepareSqlite();
        for (Servers.Db db : Servers.Db.values()) {
            Floors.prepare(db);
        }
        for (Servers.Db db : List.of(Servers.Db.POSTGRESQL, Servers.Db.MARIADB)) {
            RawSubjects.createLeaseTable(db);
            Competitors.ShedLockJdbc.createTable(db);
            Competitors.SpringJdbc.createTable(db);
        }
        Servers.prepareMariaDbUser();
    }

    /** One JMH row: SampleTime statistics in microseconds plus the spread of per-iteration medians. */
    record JmhRow(String id, double p50, double p99, double mean, long samples, double scoreError,
                  double iterP50Min, double iterP50Max, String error) {
        double opsPerSecond() {
            return mean > 0 ? 1e6 / mean : -1;
        }
    }

    static Map<String, JmhRow> jmh(Class<?> bench, String param, List<String> values, Mode mode) {
        Map<String, JmhRow> rows = new LinkedHashMap<>();
        for (String v : values) {
            // one JMH run per value, so that a subject that fails leaves the others' rows intact
            ChainedOptionsBuilder opt = new OptionsBuilder()
                    .include(bench.getName() + "\\.")
                    .param(param, v)
                    .forks(mode.forks())
                    .warmupIterations(mode.warmupIterations())
                    .warmupTime(TimeValue.milliseconds((long) (mode.warmupSeconds() * 1000)))
                    .measurementIterations(mode.iterations())
                    .measurementTime(TimeValue.milliseconds((long) (mode.iterationSeconds() * 1000)))
                    .shouldFailOnError(true)
                    .verbosity(VerboseMode.SILENT)
                    .jvmArgsAppend("-Dbench.zk=" + Servers.zk(), "-Xmx1g",
                            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
            try {
                Collection<RunResult> results = new Runner(opt.build()).run();
                RunResult r = results.iterator().next();
                var st = r.getPrimaryResult().getStatistics();
                double min = Double.MAX_VALUE;
                double max = 0;
                for (BenchmarkResult br : r.getBenchmarkResults()) {
                    for (IterationResult ir : br.getIterationResults()) {
                        double p = ir.getPrimaryResult().getStatistics().getPercentile(50);
                        min = Math.min(min, p);
                        max = Math.max(max, p);
                    }
                }
                JmhRow row = new JmhRow(v, st.getPercentile(50), st.getPercentile(99), st.getMean(), st.getN(),
                        r.getPrimaryResult().getScoreError(), min, max, null);
                rows.put(v, row);
                log(String.format("  %-22s p50 %8.1f µs, p99 %9.1f µs, iteration p50 %.1f–%.1f µs, %d samples",
                        v, row.p50(), row.p99(), min, max, row.samples()));
            } catch (Exception e) {
                log("  " + v + " failed: " + e.getMessage());
                rows.put(v, new JmhRow(v, -1, -1, -1, 0, -1, -1, -1, String.valueOf(e.getMessage())));
            }
        }
        return rows;
    }

    static String join(Collection<String> items) {
        return items.stream().collect(Collectors.joining(", "));
    }
}
