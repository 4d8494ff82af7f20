package dev.baton.checker;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code baton check --html FILE}: one self-contained page (inline SVG and CSS, no script, nothing fetched) with,
 * per scenario, a timeline per lock: one row per worker slot, a thin line while an attempt waited, a bar while
 * it held the lock labelled with its fencing token, a band where each fault hit, and the violations outlined in
 * red. The page is well-formed XML as well as HTML, so a test can parse it with the JDK alone.
 */
final class HtmlReport {
    private static final int GUTTER = 56;
    private static final int ROW = 26;
    private static final int AXIS = 22;
    /** Violations listed above the timelines; the rest fold away. */
    private static final int SHOWN_VIOLATIONS = 8;
    /** Wide enough that a 100 ms hold has room for a 3-digit token; a long run scrolls sideways. */
    private static final double MIN_PX_PER_SECOND = 150;
    private static final double TARGET_WIDTH = 1100;
    private static final Pattern ATTEMPT = Pattern.compile("\\bw\\d+\\.\\d+\\.\\d+\\b");
    private static final Pattern LOCK = Pattern.compile("\\block-\\d+\\b");
    private static final Pattern TIME = Pattern.compile("t\\+(\\d+\\.\\d+)s");
    private static final String[] PALETTE = {"#4e79a7", "#59a14f", "#9c755f", "#b07aa1", "#76b7b2", "#edc948",
        "#ff9da7", "#bab0ac"};

    private HtmlReport() {
    }

    /** The whole page: the command, a legend, then the scenarios' sections in order. */
    static String page(String command, List<String> sections) {
        StringBuilder h = new StringBuilder(1 << 16);
        h.append("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n")
                .append("<meta charset=\"utf-8\"/>\n<title>baton check report</title>\n<style>\n").append(CSS)
                .append("</style>\n</head>\n<body>\n<h1>baton check</h1>\n<p class=\"command\"><code>")
                .append(esc(command)).append("</code></p>\n").append(LEGEND);
        sections.forEach(h::append);
        return h.append("</body>\n</html>\n").toString();
    }

    /** One scenario: its verdict and figures, every violation, and a timeline per lock. */
    static String section(Analysis analysis, Analysis.Result result) {
        StringBuilder h = new StringBuilder(1 << 14);
        String verdict = result.verdict();
        h.append("<section class=\"scenario\" data-verdict=\"").append(esc(verdict)).append("\">\n<h2>")
                .append(esc(result.backendName())).append(" × ").append(esc(result.scenario()))
                .append(" <span class=\"verdict v-").append(esc(verdict.toLowerCase(Locale.ROOT).replace('/', '-')))
                .append("\">").append(esc(verdict)).append("</span></h2>\n<p>").append(esc(result.verdictReason()))
                .append("</p>\n");
        if (verdict.equals("N/A") || verdict.equals("REFUSED")) {
            return h.append("</section>\n").toString();
        }
        ScenarioSpec spec = result.spec();
        h.append("<p class=\"figures\">").append(esc(result.backend())).append("; strategy ")
                .append(esc(spec.strategy().name())).append(", ").append(spec.workers()).append(" workers, ")
                .append(spec.locks()).append(" locks, lease ").append(spec.leaseTime().toMillis()).append(" ms; ")
                .append(result.grants()).append(" grants, ").append(result.faultsInjected())
                .append(" faults injected, ").append(result.hits()).append(" hit a holder, ")
                .append(result.staleRejected()).append(" stale accesses rejected by the fence</p>\n");
        List<String> violations = analysis.allViolations();
        if (!violations.isEmpty()) {
            h.append("<ol class=\"violations\">\n");
            for (int i = 0; i < violations.size(); i++) {
                if (i == SHOWN_VIOLATIONS) {
                    h.append("</ol>\n<details><summary>").append(violations.size() - SHOWN_VIOLATIONS)
                            .append(" more violation(s)</summary>\n<ol class=\"violations\" start=\"")
                            .append(SHOWN_VIOLATIONS + 1).append("\">\n");
                }
                h.append("<li>").append(esc(violations.get(i))).append("</li>\n");
            }
            h.append(violations.size() > SHOWN_VIOLATIONS ? "</ol>\n</details>\n" : "</ol>\n");
        }
        List<Analysis.Attempt> attempts = analysis.attempts();
        if (attempts.isEmpty()) {
            return h.append("<p>No acquisition attempts to draw (the run-once strategy's calls are not drawn).</p>\n")
                    .append("</section>\n").toString();
        }
        new Drawing(analysis, attempts, violations).draw(h);
        return h.append("</section>\n").toString();
    }

    /** Places one scenario's history on a time axis. */
    private static final class Drawing {
        private final Analysis analysis;
        private final Scenario.Record rec;
        private final List<Analysis.Attempt> attempts;
        private final List<String> violations;
        private final Set<String> violated = new HashSet<>();
        private final long t0;
        private final long tEnd;
        private final double pxPerSecond;
        private final int rows;

        Drawing(Analysis analysis, List<Analysis.Attempt> attempts, List<String> violations) {
            this.analysis = analysis;
            this.rec = analysis.record();
            this.attempts = attempts;
            this.violations = violations;
            for (String v : violations) {
                Matcher m = ATTEMPT.matcher(v);
                while (m.find()) {
                    violated.add(m.group());
                }
            }
            long first = rec.runStart();
            long last = rec.stopAt();
            for (Analysis.Attempt a : attempts) {
                first = Math.min(first, a.invokeT);
                last = Math.max(last, finite(a.outcomeT, last));
                last = Math.max(last, finite(a.beliefEnd(), last));
            }
            for (Scenario.Fault f : rec.faults()) {
                last = Math.max(last, f.end());
            }
            t0 = first;
            tEnd = last;
            double seconds = Math.max(1, (tEnd - t0) / 1e9);
            pxPerSecond = Math.max(MIN_PX_PER_SECOND, TARGET_WIDTH / seconds);
            rows = rec.spec().workers();
        }

        private static long finite(long t, long otherwise) {
            return t == Long.MAX_VALUE ? otherwise : t;
        }

        private double x(long t) {
            return GUTTER + (Math.max(t, t0) - t0) / 1e9 * pxPerSecond;
        }

        private String at(long t) {
            return String.format(Locale.ROOT, "t+%.3fs", (t - rec.runStart()) / 1e9);
        }

        private static String n(double v) {
            return String.format(Locale.ROOT, "%.1f", v);
        }

        void draw(StringBuilder h) {
            Set<String> locks = new TreeSet<>(Scenario.lockNames(rec.spec().locks()));
            attempts.forEach(a -> locks.add(a.lock));
            for (String lock : locks) {
                h.append("<h3>").append(esc(lock)).append("</h3>\n<div class=\"scroll\">\n");
                lane(h, lock);
                h.append("</div>\n");
            }
        }

        private void lane(StringBuilder h, String lock) {
            double width = x(tEnd) + 16;
            int height = AXIS + rows * ROW + 6;
            h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" data-lock=\"").append(esc(lock))
                    .append("\" width=\"").append(n(width)).append("\" height=\"").append(height)
                    .append("\" viewBox=\"0 0 ").append(n(width)).append(' ').append(height).append("\">\n");
            axis(h, height);
            for (int w = 0; w < rows; w++) {
                int y = AXIS + w * ROW;
                h.append("<text class=\"row\" x=\"4\" y=\"").append(y + 14).append("\">w").append(w).append("</text>")
                        .append("<line class=\"sep\" x1=\"").append(GUTTER).append("\" x2=\"").append(n(width))
                        .append("\" y1=\"").append(y + ROW).append("\" y2=\"").append(y + ROW).append("\"/>\n");
            }
            faults(h, lock, height);
            for (Analysis.Attempt a : attempts) {
                if (a.lock.equals(lock) && a.worker < rows) {
                    attempt(h, a);
                }
            }
            staleAccesses(h, lock);
            violationMarks(h, lock, height);
            h.append("</svg>\n");
        }

        private void axis(StringBuilder h, int height) {
            double seconds = (tEnd - t0) / 1e9;
            int step = seconds > 120 ? 10 : seconds > 40 ? 5 : 1;
            long origin = rec.runStart();
            for (int s = 0; origin + s * 1_000_000_000L <= tEnd; s += step) {
                double x = x(origin + s * 1_000_000_000L);
                h.append("<line class=\"grid\" x1=\"").append(n(x)).append("\" x2=\"").append(n(x))
                        .append("\" y1=\"").append(AXIS - 4).append("\" y2=\"").append(height).append("\"/>")
                        .append("<text class=\"tick\" x=\"").append(n(x + 2)).append("\" y=\"12\">").append(s)
                        .append(" s</text>\n");
            }
        }

        /** A band over the faulted worker's row (every row for a server-wide fault), labelled with its kind. */
        private void faults(StringBuilder h, String lock, int height) {
            for (Scenario.Fault f : rec.faults()) {
                boolean wide = ScenarioSpec.serverWide(f.kind());
                if (!wide && !lock.equals(f.lock())) {
                    continue;
                }
                boolean hit = analysis.hit(f) && lock.equals(f.lock());
                double x0 = x(f.start());
                double w = Math.max(3, x(f.end()) - x0);
                int y = wide ? AXIS : AXIS + f.worker() * ROW;
                int hgt = wide ? height - AXIS : ROW;
                String label = f.kind().equals("partition") ? "partition " + f.mode() : f.kind();
                h.append("<g class=\"fault").append(hit ? " hit" : " missed").append("\" data-kind=\"")
                        .append(esc(f.kind())).append("\"><title>").append(esc(label + " of w" + f.worker() + "."
                                + f.generation() + " (pid " + f.pid() + ") holding " + f.lock() + " with token "
                                + f.token() + ", " + at(f.start()) + " to " + at(f.end())
                                + (hit ? ": hit the holder" : ": missed (the holder had let go)")))
                        .append("</title><rect x=\"").append(n(x0)).append("\" y=\"").append(y).append("\" width=\"")
                        .append(n(w)).append("\" height=\"").append(hgt).append("\"/><text x=\"").append(n(x0 + 2))
                        .append("\" y=\"").append(y + ROW - 3).append("\">").append(esc(label)).append("</text></g>\n");
            }
        }

        /** A thin line while it waited; a bar with its token while it held (until it released, lost, or died). */
        private void attempt(StringBuilder h, Analysis.Attempt a) {
            int y = AXIS + a.worker * ROW;
            long waitEnd = a.outcome == Outcome.NONE ? finite(a.procEnd, tEnd) : a.outcomeT;
            String outcome = switch (a.outcome) {
                case OK -> "granted token " + a.token;
                case FAIL -> "timed out";
                case INDETERMINATE -> "ended in an error: " + a.error;
                case NONE -> "no outcome (its process ended)";
            };
            h.append("<line class=\"wait\" x1=\"").append(n(x(a.invokeT))).append("\" x2=\"")
                    .append(n(Math.max(x(waitEnd), x(a.invokeT) + 1))).append("\" y1=\"").append(y + 9)
                    .append("\" y2=\"").append(y + 9).append("\"><title>").append(esc(a.id + " waited from "
                            + at(a.invokeT) + " to " + at(waitEnd) + ": " + outcome)).append("</title></line>\n");
            if (!a.ok()) {
                return;
            }
            long end = finite(a.beliefEnd(), tEnd);
            String how = a.lostAfterDeadline() && a.lostDeadline == a.beliefEnd() ? "its lease's local deadline"
                    + " passed; told it was lost at " + at(a.lostT) + (a.lostMsg == null ? "" : " (" + a.lostMsg + ")")
                    : a.lostT != Long.MAX_VALUE && a.lostT == a.beliefEnd() ? "told its lease was lost"
                    + (a.lostMsg == null ? "" : " (" + a.lostMsg + ")")
                    : a.releaseT != Long.MAX_VALUE && a.releaseT == a.beliefEnd() ? "released"
                    : a.beliefEnd() != Long.MAX_VALUE ? "its process ended" : "still held at the end";
            double x0 = x(a.outcomeT);
            double w = Math.max(1.5, x(end) - x0);
            boolean bad = violated.contains(a.id);
            h.append("<g class=\"hold").append(bad ? " violation" : "").append("\" data-attempt=\"").append(esc(a.id))
                    .append("\" data-token=\"").append(a.token).append("\"><title>")
                    .append(esc(a.id + " (w" + a.worker + "." + a.generation + ") held " + a.lock + " with token "
                            + a.token + " from " + at(a.outcomeT) + " to " + at(end) + ": " + how))
                    .append("</title><rect x=\"").append(n(x0)).append("\" y=\"").append(y + 2).append("\" width=\"")
                    .append(n(w)).append("\" height=\"14\" fill=\"").append(PALETTE[a.worker % PALETTE.length])
                    .append("\"/>");
            String label = Long.toString(a.token);
            if (w >= 5.5 * label.length() + 3) {
                h.append("<text x=\"").append(n(x0 + 1.5)).append("\" y=\"").append(y + 12.5).append("\">").append(label)
                        .append("</text>");
            }
            h.append("</g>\n");
            if (a.lostT != Long.MAX_VALUE) {
                h.append("<path class=\"lost\" d=\"M").append(n(x(a.lostT))).append(' ').append(y + 2).append(" l4 -3")
                        .append(" h-8 z\"><title>").append(esc(a.id + " heard its lease was lost at " + at(a.lostT)
                                + (a.lostMsg == null ? "" : ": " + a.lostMsg))).append("</title></path>\n");
            }
        }

        /** A small triangle where the fence turned away an access with a stale token: fencing at work. */
        private void staleAccesses(StringBuilder h, String lock) {
            for (ResourceServer.Access x : rec.accesses()) {
                if (x.accepted() || !x.lock().equals(lock)) {
                    continue;
                }
                int worker = workerOf(x.attempt());
                if (worker < 0 || worker >= rows) {
                    continue;
                }
                int y = AXIS + worker * ROW;
                h.append("<path class=\"stale\" d=\"M").append(n(x(x.nanos()) - 4)).append(' ').append(y + 23)
                        .append(" l4 -6 l4 6 z\"><title>").append(esc(x.op() + " by " + x.attempt() + " with token "
                                + x.token() + " rejected at " + at(x.nanos()) + ": the resource had seen token "
                                + x.highestBefore())).append("</title></path>\n");
            }
        }

        /**
         * A dashed red line at the time a violation names, or a band from the first to the last time it names, on
         * the timelines of the locks it names (on every lock's if it names none).
         */
        private void violationMarks(StringBuilder h, String lock, int height) {
            for (String v : violations) {
                Matcher locks = LOCK.matcher(v);
                boolean named = false;
                boolean mine = false;
                while (locks.find()) {
                    named = true;
                    mine |= locks.group().equals(lock);
                }
                if (named && !mine) {
                    continue;
                }
                Matcher t = TIME.matcher(v);
                long first = Long.MAX_VALUE;
                long last = Long.MIN_VALUE;
                while (t.find()) {
                    long at = rec.runStart() + (long) (Double.parseDouble(t.group(1)) * 1e9);
                    first = Math.min(first, at);
                    last = Math.max(last, at);
                }
                if (first == Long.MAX_VALUE) {
                    continue;
                }
                double x0 = x(first);
                double w = x(last) - x0;
                h.append("<g class=\"violation-mark\"><title>").append(esc(v)).append("</title>");
                if (w < 1) {
                    h.append("<line x1=\"").append(n(x0)).append("\" x2=\"").append(n(x0)).append("\" y1=\"")
                            .append(AXIS).append("\" y2=\"").append(height).append("\"/>");
                } else {
                    h.append("<rect x=\"").append(n(x0)).append("\" y=\"").append(AXIS).append("\" width=\"")
                            .append(n(w)).append("\" height=\"").append(height - AXIS).append("\"/>");
                }
                h.append("<text x=\"").append(n(x0 + 2)).append("\" y=\"").append(AXIS - 2).append("\">")
                        .append(esc(v.substring(0, 3))).append("</text></g>\n");
            }
        }

        /** The worker slot of an attempt id {@code w<slot>.<generation>.<n>}, or -1. */
        private static int workerOf(String attempt) {
            if (attempt == null || !attempt.startsWith("w")) {
                return -1;
            }
            int dot = attempt.indexOf('.');
            try {
                return Integer.parseInt(attempt.substring(1, dot < 0 ? attempt.length() : dot));
            } catch (NumberFormatException e) {
                return -1;
            }
        }
    }

    /** Text for HTML and XML alike. */
    static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> {
                    if (c < 0x20 && c != '\n' && c != '\t') {
                        b.append(' '); // not allowed in XML 1.0
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }

    private static final String CSS = """
            body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
            h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
            h3 { margin: 1em 0 0.2em; font-size: 1em; }
            code { font-size: 12px; }
            .verdict { padding: 0 0.4em; border-radius: 3px; color: #fff; font-size: 0.8em; }
            .v-pass { background: #2e7d32; } .v-fail { background: #c62828; }
            .v-inconclusive { background: #ef6c00; } .v-n-a, .v-refused { background: #777; }
            .figures { color: #555; }
            ol.violations { color: #b71c1c; font-family: monospace; font-size: 12px; }
            .scroll { overflow-x: auto; border: 1px solid #ddd; }
            svg.timeline { display: block; font: 10px sans-serif; }
            svg .tick, svg .row { fill: #555; } svg .row { font-size: 11px; }
            svg .grid { stroke: #eee; } svg .sep { stroke: #f2f2f2; }
            svg .wait line, svg line.wait { stroke: #999; stroke-width: 1.5; }
            svg .hold rect { stroke: none; }
            svg .hold text { fill: #fff; font-size: 9px; font-family: monospace; }
            svg .hold.violation rect { stroke: #d50000; stroke-width: 2.5; }
            svg .fault rect { fill: #e53935; fill-opacity: 0.25; stroke: #e53935; stroke-width: 1; }
            svg .fault.missed rect { fill-opacity: 0.08; stroke-dasharray: 3 2; }
            svg .fault text { fill: #b71c1c; font-size: 9px; }
            svg .lost { fill: #000; }
            svg .stale { fill: #ff8f00; }
            svg .violation-mark line { stroke: #d50000; stroke-width: 1.5; stroke-dasharray: 4 3; }
            svg .violation-mark rect { fill: #d50000; fill-opacity: 0.08; stroke: #d50000; stroke-dasharray: 4 3; }
            svg .violation-mark text { fill: #d50000; font-weight: bold; }
            .legend svg { vertical-align: middle; }
            .legend span { margin-right: 1.2em; white-space: nowrap; }
            """;

    private static final String LEGEND = """
            <p class="legend">
            <span><svg xmlns="http://www.w3.org/2000/svg" width="30" height="12"><line x1="0" x2="30" y1="6" y2="6" \
            stroke="#999" stroke-width="1.5"/></svg> waiting to acquire</span>
            <span><svg xmlns="http://www.w3.org/2000/svg" width="30" height="14"><rect width="30" height="14" \
            fill="#4e79a7"/><text x="2" y="11" fill="#fff" font-size="9">17</text></svg> holding, with its \
            fencing token (until it released, heard its lease was lost, or its process ended)</span>
            <span><svg xmlns="http://www.w3.org/2000/svg" width="30" height="14"><rect width="30" height="14" \
            fill="#e53935" fill-opacity="0.25" stroke="#e53935"/></svg> a fault that hit the holder (dashed: \
            it missed)</span>
            <span><svg xmlns="http://www.w3.org/2000/svg" width="12" height="8"><path d="M6 8 l4 -6 h-8 z"/></svg> \
            lease-lost notice</span>
            <span><svg xmlns="http://www.w3.org/2000/svg" width="12" height="8"><path d="M2 8 l4 -6 l4 6 z" \
            fill="#ff8f00"/></svg> access with a stale token, rejected by the fence</span>
            <span><svg xmlns="http://www.w3.org/2000/svg" width="30" height="14"><rect x="1" y="1" width="28" \
            height="12" fill="#4e79a7" stroke="#d50000" stroke-width="2.5"/></svg> a hold a violation names; \
            a dashed red line (or band) at the time(s) it names</span>
            </p>
            <p>Hover over any mark for its details. One row per worker slot (w0, w1, …); a killed worker's \
            replacement continues its row.</p>
            """;
}
