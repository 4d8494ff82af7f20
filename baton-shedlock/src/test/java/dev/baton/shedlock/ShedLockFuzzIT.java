package dev.baton.shedlock;

import net.javacrumbs.shedlock.test.support.FuzzTester;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.function.Supplier;

/**
 * ShedLock's fuzz test ({@code shedlock-test-support}'s {@link FuzzTester}: 8 threads, 800 grants, the unguarded
 * counters must come out exact) on every backend. It takes 15 to 30 s per backend, so the default build does not run
 * this class (the module's pom excludes it) and runs the fuzz test on PostgreSQL only ({@link PostgresShedLockIT});
 * {@code -Dbaton.shedlock.fuzz} runs this class too (see docs/SHEDLOCK.md).
 */
class ShedLockFuzzIT {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"PostgreSQL", "MariaDB", "Redis", "ZooKeeper"})
    void fuzzTestShouldPass(String server) throws Exception {
        try (Backend backend = backend(server).get()) {
            new FuzzTester(backend.provider).doFuzzTest();
        }
    }

    private static Supplier<Backend> backend(String server) {
        return switch (server) {
            case "PostgreSQL" -> Backend::postgres;
            case "MariaDB" -> Backend::mariaDb;
            case "Redis" -> Backend::redis;
            case "ZooKeeper" -> Backend::zooKeeper;
            default -> throw new IllegalArgumentException("no test backend for " + server);
        };
    }
}
