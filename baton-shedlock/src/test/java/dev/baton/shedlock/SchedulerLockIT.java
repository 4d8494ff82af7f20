package dev.baton.shedlock;

import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The user's view: two Spring contexts ("nodes", each its own Baton client on Redis) run the same
 * {@code @Scheduled @SchedulerLock} method with {@link BatonLockProvider} as their one {@link LockProvider} bean.
 * Runs never overlap, and the token each run reads grows from run to run across both nodes.
 */
class SchedulerLockIT {
    private static Backend backend;

    /** One run of the job, as the job saw it. */
    record Run(String node, long token, long startNanos, long endNanos) {
    }

    /** What a node's job writes into, shared by the test. */
    record Journal(String node, List<Run> runs) {
    }

    /** A scheduled job under a ShedLock lock. */
    public static class Job {
        private final Journal journal;

        public Job(Journal journal) {
            this.journal = journal;
        }

        @Scheduled(fixedDelay = 10)
        @SchedulerLock(name = "report", lockAtMostFor = "10s", lockAtLeastFor = "50ms")
        public void run() throws InterruptedException {
            long start = System.nanoTime();
            long token = BatonShedLock.currentToken();
            Thread.sleep(5);
            journal.runs().add(new Run(journal.node(), token, start, System.nanoTime()));
        }
    }

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "1m")
    static class NodeConfig {
        @Bean
        Job job(Journal journal) {
            return new Job(journal);
        }
    }

    @BeforeAll
    static void start() {
        backend = Backend.redis();
    }

    @AfterAll
    static void stop() {
        backend.close();
    }

    private static AnnotationConfigApplicationContext node(String name, LockProvider provider, List<Run> runs) {
        AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
        context.registerBean(LockProvider.class, () -> provider);
        context.registerBean(Journal.class, () -> new Journal(name, runs));
        context.register(NodeConfig.class);
        context.refresh();
        return context;
    }

    @Test
    void runsNeverOverlapAndTheirTokensGrow() {
        List<Run> runs = new CopyOnWriteArrayList<>();
        try (BatonLockProvider second = new BatonLockProvider(backend.observer);
             AnnotationConfigApplicationContext a = node("a", backend.provider, runs);
             AnnotationConfigApplicationContext b = node("b", second, runs)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.size() >= 12);
        }
        List<Run> ordered = new ArrayList<>(runs);
        ordered.sort(Comparator.comparingLong(Run::startNanos));
        for (int i = 1; i < ordered.size(); i++) {
            Run before = ordered.get(i - 1);
            Run next = ordered.get(i);
            assertThat(next.startNanos()).as("run %d starts after run %d ended", i, i - 1)
                    .isGreaterThanOrEqualTo(before.endNanos());
            assertThat(next.token()).as("run %d's token", i).isGreaterThan(before.token());
        }
    }
}
