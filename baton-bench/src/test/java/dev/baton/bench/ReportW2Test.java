package dev.baton.bench;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ReportW2Test {
    private static Report reportWith(long[] waits) {
        Report report = new Report(BenchMain.QUICK, Instant.parse("2026-11-25T00:00:00Z"),
                List.of(Subjects.byId("raw-lease-pg")));
        report.contended.add(new Contended.Result("raw-lease-pg", 1, waits.length, 0, 0, 0, waits, new long[0],
                new long[0], 1, waits.length, waits.length, -1, -1, new long[0], null));
        return report;
    }

    @Test
    void w2ShowsTheLongestWaitOverTheMedianRightAfterTheLongestWait() {
        String md = reportWith(new long[] {1_000, 2_000, 2_000, 3_000, 16_000}).markdown();

        assertThat(md).contains("| wait max ms | longest ÷ median wait | gap p50 µs");
        assertThat(md).contains("| raw-lease-pg | 5 | 0 | 2.00 | 16.0 | 16 | 8.0× | ");
    }

    /**
     * The "≤ 2 durable commits per hand-over" target is read from the server's log fsyncs per grant where the run
     * measured them (statements per grant counted reads, unflushed tickets and releases as commits), and from the
     * statements only where it did not.
     */
    @Test
    void durableCommitsPerHandOverAreTheServersFsyncsWhereMeasured() {
        Report report = new Report(BenchMain.QUICK, Instant.parse("2026-11-25T00:00:00Z"),
                List.of(Subjects.byId("baton-lease-pg"), Subjects.byId("baton-lease-sqlite")));
        long[] waits = {1_000, 2_000};
        report.contended.add(new Contended.Result("baton-lease-pg", 1, 2, 2, 0, 0, waits, new long[0], new long[0], 1,
                2, 2, 7.46, 0.93, new long[0], null));
        report.contended.add(new Contended.Result("baton-lease-sqlite", 1, 2, 2, 0, 0, waits, new long[0], new long[0],
                1, 2, 2, 34.72, -1, new long[0], null));
        String md = report.markdown();

        assertThat(md).contains("| W2 baton-lease-pg ≤ 2 durable commits per hand-over (server fsyncs per grant)"
                + " | 0.93 | yes |");
        assertThat(md).contains("| W2 baton-lease-sqlite ≤ 2 durable commits per hand-over (statements sent per grant,"
                + " incl. failed attempts) | 34.72 | **no** |");
    }

    @Test
    void jsonCarriesTheRatioComputedFromTheWaits() {
        assertThat(reportWith(new long[] {1_000, 2_000, 2_000, 3_000, 16_000}).json())
                .contains("\"waitMaxOverP50\": 8.000");
        assertThat(reportWith(new long[0]).json()).contains("\"waitMaxOverP50\": null");
    }
}
