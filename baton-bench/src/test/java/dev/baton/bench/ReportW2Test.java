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

    @Test
    void jsonCarriesTheRatioComputedFromTheWaits() {
        assertThat(reportWith(new long[] {1_000, 2_000, 2_000, 3_000, 16_000}).json())
                .contains("\"waitMaxOverP50\": 8.000");
        assertThat(reportWith(new long[0]).json()).contains("\"waitMaxOverP50\": null");
    }
}
