package dev.baton.examples.stock;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Two instances of the example on the tests' PostgreSQL, each with its own web server, as two hosts would run it. */
class StockExampleIT {
    private static final int STOCK = 30;
    private static final List<ConfigurableApplicationContext> instances = new ArrayList<>();
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startTwoInstances() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", 5432), 2000);
        } catch (IOException e) {
            throw new AssertionError("PostgreSQL is not reachable at 127.0.0.1:5432 (" + e.getMessage() + "). Start it"
                    + " with scripts/start-servers.sh from the repository root; this test needs the real server.", e);
        }
        for (String name : List.of("a", "b")) {
            instances.add(new SpringApplicationBuilder(StockApplication.class)
                    .properties("server.port=0", "stock.instance=" + name, "stock.tick-millis=200",
                            "baton.client-id-prefix=stock-" + name)
                    .run());
        }
        JdbcClient db = instances.get(0).getBean(JdbcClient.class);
        db.sql("DELETE FROM baton_example_stock").update();
        db.sql("INSERT INTO baton_example_stock (item, amount) VALUES ('widget', ?)").param(STOCK).update();
    }

    @AfterAll
    static void stop() {
        instances.forEach(ConfigurableApplicationContext::close);
    }

    private static int port(int instance) {
        return Integer.parseInt(instances.get(instance).getEnvironment().getProperty("local.server.port"));
    }

    @Test
    void concurrentTakesThroughBothInstancesSellEachItemOnce() throws Exception {
        int requests = 3 * STOCK;
        AtomicInteger sold = new AtomicInteger();
        AtomicInteger soldOut = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> calls = new ArrayList<>();
            for (int i = 0; i < requests; i++) {
                int instance = i % 2;
                calls.add(pool.submit(() -> {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                                    URI.create("http://127.0.0.1:" + port(instance) + "/stock/widget/take"))
                            .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(30)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200) {
                        sold.incrementAndGet();
                    } else if (r.statusCode() == 409 && r.body().equals("sold out")) {
                        soldOut.incrementAndGet();
                    } else {
                        throw new AssertionError("unexpected answer " + r.statusCode() + ": " + r.body());
                    }
                    return null;
                }));
            }
            for (Future<?> f : calls) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(sold.get()).as("every item sold exactly once").isEqualTo(STOCK);
        assertThat(soldOut.get()).isEqualTo(requests - STOCK);
        JdbcClient db = instances.get(0).getBean(JdbcClient.class);
        assertThat(db.sql("SELECT amount FROM baton_example_stock WHERE item = 'widget'").query(Integer.class).single())
                .isZero();
        assertThat(db.sql("SELECT fence FROM baton_example_stock WHERE item = 'widget'").query(Long.class).single())
                .as("the last write carried a fencing token").isPositive();
    }

    @Test
    void theScheduledJobRunsOncePerTickAcrossBothInstances() {
        JdbcClient db = instances.get(0).getBean(JdbcClient.class);
        long from = System.currentTimeMillis() / 200 + 1;
        await().atMost(Duration.ofSeconds(20))
                .until(() -> db.sql("SELECT count(DISTINCT tick) FROM baton_example_ticks WHERE tick >= ?").param(from)
                        .query(Long.class).single() >= 5);
        assertThat(db.sql("SELECT tick FROM baton_example_ticks WHERE tick >= ? GROUP BY tick HAVING count(*) > 1")
                .param(from).query(Long.class).list()).as("ticks run twice").isEmpty();
    }
}
