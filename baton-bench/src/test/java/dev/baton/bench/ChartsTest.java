package dev.baton.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ChartsTest {
    @TempDir
    Path dir;

    private static Contended.Result result(String subject, long grants, long cross, long... waits) {
        return new Contended.Result(subject, 2, grants, cross, 0, grants - cross, waits, new long[0], new long[0], 1,
                grants, grants, -1, -1, new long[0], null);
    }

    @Test
    void writesBothChartsUnderTheRunsNameAndTheLatestName() throws Exception {
        List<Contended.Result> results = List.of(
                result("baton-lease-pg", 1_000, 700, 0, 900, 1_200, 13_000, 29_000),
                result("spring-redis", 9_000, 20, 50, 100, 120, 2_100, 1_305_000),
                new Contended.Result("broken", 1, 0, 0, 0, 0, new long[0], new long[0], new long[0], 0, 0, 0, -1, -1,
                        new long[0], "IllegalStateException: no server"));

        List<Path> files = Charts.write(results, "quick run of a test", dir, "run-quick", "latest-quick");

        assertThat(files).extracting(p -> p.getFileName().toString()).containsExactly("run-quick-handovers.png",
                "run-quick-waits.png", "latest-quick-handovers.png", "latest-quick-waits.png");
        for (Path f : files) {
            BufferedImage image = ImageIO.read(f.toFile());
            assertThat(image).as("%s is a PNG", f).isNotNull();
            // two subjects drawn (the one that failed is left out): one row each below the titles
            assertThat(image.getWidth()).isEqualTo(960);
            assertThat(image.getHeight()).isGreaterThan(140 + 2 * 26 - 1).isLessThan(140 + 3 * 26 + 30);
        }
    }

    @Test
    void noChartWhenNoSubjectRan() throws Exception {
        assertThat(Charts.write(List.of(), "nothing", dir, "x")).isEmpty();
    }
}
