package dev.baton.bench;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The run's results as a markdown report and as JSON. */
final class Report {
    final BenchMain.Mode mode;
    final Instant started;
    Instant finished;
    final List<Subject> subjects;
    Map<String, String> machine = Map.of();
    Map<String, BenchMain.JmhRow> floors = new LinkedHashMap<>();
    Map<String, BenchMain.JmhRow> uncontended = new LinkedHashMap<>();
    final List<Contended.Result> contended = new ArrayList<>();
    final List<ManyLocks.Result> manyLocks = new ArrayList<>();

    Report(BenchMain.Mode mode, Instant started, List<Subject> subjects) {
        this.mode = mode;
        this.started = started;
        this.subjects = subjects;
    }

    List<String> failures() {
        List<String> f = new ArrayList<>();
        floors.values().stream().filter(r -> r.error() != null).forEach(r -> f.add("W0 " + r.id()));
        uncontended.values().stream().filter(r -> r.error() != null).forEach(r -> f.add("W1 " + r.id()));
        contended.stream().filter(r -> r.error() != null).forEach(r -> f.add("W2 " + r.subject()));
        manyLocks.stream().filter(r -> r.error() != null).forEach(r -> f.add("W3 " + r.subject() + " x " + r.locks()));
        return f;
    }

    private Subject subject(String id) {
        return subjects.stream().filter(s -> s.id().equals(id)).findFirst().orElse(null);
    }

    /** Read and durable-write floor ids of a server. */
    private static String readFloor(String server) {
        return switch (server) {
            case "redis" -> "redis-ping";
            case "zookeeper" -> "zookeeper-exists";
            default -> server + "-select1";
        };
    }

    private static String writeFloor(String server) {
        return switch (server) {
            case "redis" -> null;
            case "zookeeper" -> "zookeeper-setdata";
            default -> server + "-update";
        };
    }

    private double floorP50(String id) {
        BenchMain.JmhRow r = id == null ? null : floors.get(id);
        return r == null || r.error() != null ? -1 : r.p50();
    }

    private static String f(double v, int decimals) {
        if (v < 0 || Double.isNaN(v) || Double.isInfinite(v)) {
            return "–";
        }
        return String.format(Locale.ROOT, "%,." + decimals + "f", v);
    }

    private static String ratio(double a, double b) {
        return a < 0 || b <= 0 ? "–" : String.format(Locale.ROOT, "%.2f×", a / b);
    }

    /**
     * The longest wait ÷ the median wait of a sorted array of waits (W2's "longest ÷ median wait"), NaN if there is
     * no wait or the median is zero. Derived from the waits when the report is written, never stored apart.
     */
    static double longestOverMedian(long[] sortedWaits) {
        long p50 = Contended.quantile(sortedWaits, 0.5);
        return p50 <= 0 ? Double.NaN : (double) Contended.quantile(sortedWaits, 1.0) / p50;
    }

    /** A ratio with one decimal, "8.0×"; "–" if not a number. */
    private static String times(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "–" : String.format(Locale.ROOT, "%,.1f×", v);
    }

    private static String pct(long part, long whole) {
        return whole <= 0 ? "–" : String.format(Locale.ROOT, "%.0f%%", 100.0 * part / whole);
    }

    String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# Baton benchmark — ").append(mode.name()).append(" run, ").append(started).append("\n\n");
        md.append("Duration ").append(finished == null ? "?" : Duration.between(started, finished).toSeconds())
                .append(" s. JMH (W0, W1): SampleTime, ").append(mode.forks()).append(" fork(s), ")
                .append(mode.warmupIterations()).append("×").append(mode.warmupSeconds()).append(" s warm-up, ")
                .append(mode.iterations()).append("×").append(mode.iterationSeconds())
                .append(" s measured. W2: ").append(mode.w2Warmup()).append(" s warm-up + ").append(mode.w2Seconds())
                .append(" s, ").append(Contended.CLIENTS).append(" clients × ").append(Contended.THREADS_PER_CLIENT)
                .append(" threads. W3: lease ").append(ManyLocks.LEASE.toMillis()).append(" ms, renewals counted over ")
                .append(mode.w3Intervals()).append(" interval(s).\n\n");

        md.append("## Machine\n\n| | |\n|---|---|\n");
        machine.forEach((k, v) -> md.append("| ").append(k).append(" | ").append(v).append(" |\n"));

        md.append("\n## Subjects\n\n| id | kind | server | library | how a waiter waits |\n|---|---|---|---|---|\n");
        for (Subject s : subjects) {
            md.append("| ").append(s.id()).append(" | ").append(s.kind().name().toLowerCase(Locale.ROOT)).append(" | ")
                    .append(s.server()).append(" | ").append(s.library()).append(" | ").append(s.waits()).append(" |\n");
        }

        if (!floors.isEmpty()) {
            md.append("\n## W0 floor: one operation on one connection (µs)\n\n")
                    .append("| floor | ops/s | p50 | p99 | mean ± err (99.9%) | iteration p50 min–max | samples |\n")
                    .append("|---|---:|---:|---:|---:|---:|---:|\n");
            for (BenchMain.JmhRow r : floors.values()) {
                md.append("| ").append(r.id()).append(" | ").append(f(r.opsPerSecond(), 0)).append(" | ")
                        .append(f(r.p50(), 1)).append(" | ").append(f(r.p99(), 1)).append(" | ")
                        .append(f(r.mean(), 1)).append(" ± ").append(f(r.scoreError(), 1)).append(" | ")
                        .append(f(r.iterP50Min(), 1)).append("–").append(f(r.iterP50Max(), 1)).append(" | ")
                        .append(r.samples()).append(r.error() == null ? "" : " FAILED").append(" |\n");
            }
        }

        if (!uncontended.isEmpty()) {
            md.append("\n## W1 uncontended: acquire + release, one thread (µs)\n\n")
                    .append("| subject | cycles/s | p50 | p99 | iteration p50 min–max | p50 / read RTT | p50 / durable write | p50 / raw primitive |\n")
                    .append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
            for (BenchMain.JmhRow r : uncontended.values()) {
                Subject s = subject(r.id());
                double raw = -1;
                if (s != null && s.baseline() != null && uncontended.containsKey(s.baseline())) {
                    raw = uncontended.get(s.baseline()).p50();
                }
                md.append("| ").append(r.id()).append(" | ").append(f(r.opsPerSecond(), 0)).append(" | ")
                        .append(f(r.p50(), 1)).append(" | ").append(f(r.p99(), 1)).append(" | ")
                        .append(f(r.iterP50Min(), 1)).append("–").append(f(r.iterP50Max(), 1)).append(" | ")
                        .append(ratio(r.p50(), floorP50(readFloor(s.server())))).append(" | ")
                        .append(ratio(r.p50(), floorP50(writeFloor(s.server())))).append(" | ")
                        .append(raw < 0 ? "–" : ratio(r.p50(), raw) + " (" + s.baseline() + ")")
                        .append(r.error() == null ? "" : " FAILED: " + r.error()).append(" |\n");
            }
        }

        if (!contended.isEmpty()) {
            md.append("\n## W2 contended: ").append(Contended.CLIENTS).append(" clients × ")
                    .append(Contended.THREADS_PER_CLIENT).append(" threads on one lock\n\n")
                    .append("Hand-over gap: from the holder calling release to the next holder (another thread) returning from acquire. ")
                    .append("Shares: who got the lock after a release — a FIFO-fair lock gives 0% / 14% / 86%, a random one 12% / 12% / 75%. ")
                    .append("Safety: max inside must be 1, counter − grants must be 0.\n\n")
                    .append("| subject | grants/s | cross-client hand-overs/s | wait p50 ms | wait p99 ms | wait max ms | ")
                    .append("longest ÷ median wait | ")
                    .append("gap p50 µs (cross-client) | gap p99 µs | gap p50 / read RTT | gap p50 / durable write | ")
                    .append("same thread | same client | other client | statements/grant | server fsyncs/grant | max inside | counter − grants |\n")
                    .append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (Contended.Result r : contended) {
                Subject s = subject(r.subject());
                long gap50 = Contended.quantile(r.crossGapMicros(), 0.5);
                if (r.error() != null && r.allGrants() == 0) {
                    md.append("| ").append(r.subject()).append(" | FAILED: ").append(r.error().replace('|', '/'))
                            .append(" |").append("|".repeat(16)).append("\n");
                    continue;
                }
                md.append("| ").append(r.subject()).append(" | ").append(f(r.grantsPerSecond(), 0)).append(" | ")
                        .append(f(r.crossClientPerSecond(), 0)).append(" | ")
                        .append(f(Contended.quantile(r.waitMicros(), 0.5) / 1000.0, 2)).append(" | ")
                        .append(f(Contended.quantile(r.waitMicros(), 0.99) / 1000.0, 1)).append(" | ")
                        .append(f(Contended.quantile(r.waitMicros(), 1.0) / 1000.0, 0)).append(" | ")
                        .append(times(longestOverMedian(r.waitMicros()))).append(" | ")
                        .append(gap50 < 0 ? "–" : f(gap50, 0)).append(" | ")
                        .append(f(Contended.quantile(r.crossGapMicros(), 0.99), 0)).append(" | ")
                        .append(ratio(gap50, floorP50(readFloor(s.server())))).append(" | ")
                        .append(ratio(gap50, floorP50(writeFloor(s.server())))).append(" | ")
                        .append(pct(r.sameThread(), r.grants())).append(" | ")
                        .append(pct(r.sameClientOther(), r.grants())).append(" | ")
                        .append(pct(r.crossClient(), r.grants())).append(" | ")
                        .append(r.statementsPerGrant() < 0 ? "–" : f(r.statementsPerGrant(), 2)).append(" | ")
                        .append(r.serverFsyncsPerGrant() < 0 ? "–" : f(r.serverFsyncsPerGrant(), 2)).append(" | ")
                        .append(r.maxInside()).append(" | ").append(r.unguarded() - r.allGrants())
                        .append(r.error() == null ? "" : " ERROR: " + r.error().replace('|', '/')).append(" |\n");
            }
        }

        if (!manyLocks.isEmpty()) {
            md.append("\n## W3 many locks held by one client\n\n")
                    .append("| subject | locks | server connections | renewal statements / interval | heap bytes / lock | acquire all (ms) | per lock (µs) | note |\n")
                    .append("|---|---:|---:|---:|---:|---:|---:|---|\n");
            for (ManyLocks.Result r : manyLocks) {
                md.append("| ").append(r.subject()).append(" | ").append(f(r.locks(), 0)).append(" | ")
                        .append(r.connections() < 0 ? "–" : String.valueOf(r.connections())).append(" | ")
                        .append(f(r.renewalsPerInterval(), 1)).append(" | ")
                        .append(r.locks() < 100 ? "–" : f(r.heapBytesPerLock(), 0)).append(" | ")
                        .append(f(r.acquireAllMillis(), 0)).append(" | ")
                        .append(f(r.acquireAllMillis() * 1000 / r.locks(), 0)).append(" | ")
                        .append(r.note()).append(r.error() == null ? "" : " FAILED: " + r.error()).append(" |\n");
            }
        }
        md.append(targets());
        return md.toString();
    }

    private Contended.Result w2(String id) {
        return contended.stream().filter(r -> r.subject().equals(id) && r.error() == null).findFirst().orElse(null);
    }

    /** The targets, checked against this run (for reading, never asserted). */
    private String targets() {
        StringBuilder t = new StringBuilder("\n## Targets of issue 5, checked against this run\n\n")
                .append("| target | measured | met |\n|---|---|---|\n");
        for (Subject s : subjects) {
            if (s.kind() != Subject.Kind.BATON) {
                continue;
            }
            BenchMain.JmhRow w1 = uncontended.get(s.id());
            if (w1 != null && w1.error() == null) {
                if (s.baseline() != null && uncontended.containsKey(s.baseline())) {
                    double raw = uncontended.get(s.baseline()).p50();
                    row(t, "W1 " + s.id() + " p50 ≤ 1.2× " + s.baseline(), ratio(w1.p50(), raw), w1.p50() <= 1.2 * raw);
                }
                double write = floorP50(writeFloor(s.server()));
                if (write > 0) {
                    row(t, "W1 " + s.id() + " p50 ≤ 2.4× durable write", ratio(w1.p50(), write), w1.p50() <= 2.4 * write);
                }
            }
            Contended.Result r = w2(s.id());
            if (r == null) {
                continue;
            }
            String db = s.server().equals("postgresql") ? "pg" : s.server();
            for (String[] cmp : new String[][]{{"shedlock-jdbc-" + db, "2"}, {"spring-jdbc-" + db, "10"}}) {
                Contended.Result o = w2(cmp[0]);
                if (o != null) {
                    double need = Double.parseDouble(cmp[1]);
                    double mine = r.crossClientPerSecond();
                    double theirs = o.crossClientPerSecond();
                    row(t, "W2 " + s.id() + " cross-client hand-overs/s ≥ " + cmp[1] + "× " + cmp[0],
                            f(mine, 0) + " vs " + f(theirs, 0) + " (" + (theirs > 0 ? ratio(mine, theirs) : "∞") + ")",
                            mine >= need * theirs);
                }
            }
            double write = floorP50(writeFloor(s.server()));
            long gap = Contended.quantile(r.crossGapMicros(), 0.5);
            if (write > 0 && gap >= 0) {
                row(t, "W2 " + s.id() + " gap p50 ≤ 2.5× durable write", f(gap, 0) + " µs = " + ratio(gap, write),
                        gap <= 2.5 * write);
            }
            if (r.serverFsyncsPerGrant() >= 0) {
                // measured on the server: statements are no proxy once reads, tickets and releases are not flushed
                // (an approximation: group commit merges commits, background flushes add some; and it reads 0 on a
                // server that does not fsync, which the machine table shows)
                row(t, "W2 " + s.id() + " ≤ 2 durable commits per hand-over (server fsyncs per grant)",
                        f(r.serverFsyncsPerGrant(), 2), r.serverFsyncsPerGrant() <= 2.0);
            } else if (r.statementsPerGrant() >= 0) {
                row(t, "W2 " + s.id() + " ≤ 2 durable commits per hand-over (statements sent per grant, incl. failed attempts)",
                        f(r.statementsPerGrant(), 2), r.statementsPerGrant() <= 2.0);
            }
            long p50 = Contended.quantile(r.waitMicros(), 0.5);
            long max = Contended.quantile(r.waitMicros(), 1.0);
            row(t, "W2 " + s.id() + " longest wait ≤ 10× median wait", f(max / 1000.0, 0) + " ms vs "
                    + f(p50 / 1000.0, 1) + " ms (" + ratio(max, p50) + ")", p50 > 0 && max <= 10 * p50);
        }
        List<ManyLocks.Result> w3 = manyLocks.stream().filter(r -> r.error() == null).toList();
        for (Subject s : subjects) {
            List<ManyLocks.Result> mine = w3.stream().filter(r -> r.subject().equals(s.id())).toList();
            if (s.kind() != Subject.Kind.BATON || mine.size() < 2) {
                continue;
            }
            String conns = mine.stream().map(r -> r.locks() + "→" + r.connections()).reduce((a, b) -> a + ", " + b).orElse("");
            boolean flatConns = mine.stream().mapToLong(ManyLocks.Result::connections).distinct().count() == 1;
            String renew = mine.stream().map(r -> r.locks() + "→" + f(r.renewalsPerInterval(), 1))
                    .reduce((a, b) -> a + ", " + b).orElse("");
            boolean flatRenew = mine.stream().mapToDouble(ManyLocks.Result::renewalsPerInterval)
                    .map(Math::round).distinct().count() == 1;
            if (!s.server().equals("sqlite")) {
                row(t, "W3 " + s.id() + " server connections independent of locks held", conns, flatConns);
            }
            row(t, "W3 " + s.id() + " renewal statements per interval independent of locks held", renew, flatRenew);
        }
        return t.toString();
    }

    private static void row(StringBuilder t, String target, String measured, boolean met) {
        t.append("| ").append(target).append(" | ").append(measured).append(" | ").append(met ? "yes" : "**no**").append(" |\n");
    }

    String json() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("mode", mode.name());
        root.put("started", started.toString());
        root.put("finished", String.valueOf(finished));
        root.put("machine", machine);
        List<Object> subs = new ArrayList<>();
        for (Subject s : subjects) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", s.id());
            m.put("kind", s.kind().name().toLowerCase(Locale.ROOT));
            m.put("server", s.server());
            m.put("library", s.library());
            m.put("waits", s.waits());
            m.put("baseline", s.baseline());
            subs.add(m);
        }
        root.put("subjects", subs);
        root.put("w0", jmhRows(floors));
        root.put("w1", jmhRows(uncontended));
        List<Object> w2 = new ArrayList<>();
        for (Contended.Result r : contended) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("subject", r.subject());
            m.put("seconds", r.seconds());
            m.put("grants", r.grants());
            m.put("grantsPerSecond", r.grantsPerSecond());
            m.put("crossClientHandovers", r.crossClient());
            m.put("crossClientPerSecond", r.crossClientPerSecond());
            m.put("sameThread", r.sameThread());
            m.put("sameClientOtherThread", r.sameClientOther());
            m.put("waitMicros", quantiles(r.waitMicros()));
            m.put("waitMaxOverP50", longestOverMedian(r.waitMicros()));
            m.put("crossClientGapMicros", quantiles(r.crossGapMicros()));
            m.put("anyHandoverGapMicros", quantiles(r.anyGapMicros()));
            m.put("grantsPerThread", r.grantsPerThread());
            m.put("statementsPerGrant", r.statementsPerGrant());
            m.put("serverFsyncsPerGrant", r.serverFsyncsPerGrant());
            m.put("maxInside", r.maxInside());
            m.put("unguardedCounter", r.unguarded());
            m.put("allGrants", r.allGrants());
            m.put("safe", r.safe());
            m.put("error", r.error());
            w2.add(m);
        }
        root.put("w2", w2);
        List<Object> w3 = new ArrayList<>();
        for (ManyLocks.Result r : manyLocks) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("subject", r.subject());
            m.put("locks", r.locks());
            m.put("serverConnections", r.connections());
            m.put("renewalStatementsPerInterval", r.renewalsPerInterval());
            m.put("heapBytesPerLock", r.heapBytesPerLock());
            m.put("acquireAllMillis", r.acquireAllMillis());
            m.put("note", r.note());
            m.put("error", r.error());
            w3.add(m);
        }
        root.put("w3", w3);
        return write(root) + "\n";
    }

    private static Map<String, Object> quantiles(long[] sorted) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("n", sorted.length);
        m.put("p50", Contended.quantile(sorted, 0.5));
        m.put("p90", Contended.quantile(sorted, 0.9));
        m.put("p99", Contended.quantile(sorted, 0.99));
        m.put("max", Contended.quantile(sorted, 1.0));
        return m;
    }

    private static List<Object> jmhRows(Map<String, BenchMain.JmhRow> rows) {
        List<Object> out = new ArrayList<>();
        for (BenchMain.JmhRow r : rows.values()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", r.id());
            m.put("opsPerSecond", r.opsPerSecond());
            m.put("p50Micros", r.p50());
            m.put("p99Micros", r.p99());
            m.put("meanMicros", r.mean());
            m.put("meanErrorMicros", r.scoreError());
            m.put("iterationP50MinMicros", r.iterP50Min());
            m.put("iterationP50MaxMicros", r.iterP50Max());
            m.put("samples", r.samples());
            m.put("error", r.error());
            out.add(m);
        }
        return out;
    }

    /**
     * The report's layout: two-space indents, {@code "key": value}, every array element on its own line,
     * {@code {}} and {@code []} when empty, a newline for a line feed.
     */
    private static final class Layout extends DefaultPrettyPrinter {
        private static final long serialVersionUID = 1L;

        Layout() {
            DefaultIndenter indent = new DefaultIndenter("  ", "\n");
            indentObjectsWith(indent);
            indentArraysWith(indent);
        }

        Layout(Layout base) {
            super(base);
        }

        @Override
        public Layout createInstance() {
            return new Layout(this);
        }

        @Override
        public void writeObjectFieldValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw(": ");
        }

        @Override
        public void writeEndObject(JsonGenerator g, int nrOfEntries) throws IOException {
            if (nrOfEntries == 0) {
                _nesting--;
                g.writeRaw('}');
            } else {
                super.writeEndObject(g, nrOfEntries);
            }
        }

        @Override
        public void writeEndArray(JsonGenerator g, int nrOfValues) throws IOException {
            if (nrOfValues == 0) {
                _nesting--;
                g.writeRaw(']');
            } else {
                super.writeEndArray(g, nrOfValues);
            }
        }
    }

    private static final ObjectWriter WRITER = JsonMapper.builder()
            .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN).build().writer(new Layout());

    /** The report as JSON, through Jackson. */
    static String write(Map<String, Object> root) {
        try {
            return WRITER.writeValueAsString(plain(root));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the report as JSON", e);
        }
    }

    /**
     * The values as the report shows them: a double with three decimals (null if not a number), a
     * {@code long[]} as a list, anything other than a string, number, boolean, map or list as its text.
     */
    private static Object plain(Object v) {
        if (v == null || v instanceof String || v instanceof Boolean) {
            return v;
        }
        if (v instanceof Double d) {
            return d.isNaN() || d.isInfinite() ? null : BigDecimal.valueOf(d).setScale(3, RoundingMode.HALF_UP);
        }
        if (v instanceof Number) {
            return v;
        }
        if (v instanceof long[] a) {
            List<Object> l = new ArrayList<>();
            for (long x : a) {
                l.add(x);
            }
            return l;
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), plain(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            l.forEach(x -> out.add(plain(x)));
            return out;
        }
        return v.toString();
    }
}
