package example;

import dev.baton.Lease;
import dev.baton.LockClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Only baton-bom and the starter, spring.datasource.url set: a working LockClient bean and baton.* meters. */
class StarterFromTheBomTest {
    @Test
    void theStarterGivesALockClientAndItsMeters() {
        try (Socket probe = new Socket()) {
            probe.connect(new InetSocketAddress("127.0.0.1", 5432), 2_000);
        } catch (java.io.IOException e) {
            fail("PostgreSQL is not running on 127.0.0.1:5432: start it with scripts/start-servers.sh (" + e + ")");
        }
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(UserApplication.class)
                .properties("spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
                        "spring.main.web-application-type=none")
                .run()) {
            LockClient locks = context.getBean(LockClient.class);
            long token;
            try (Lease lease = locks.lock("bom-it-spring-boot-user").acquire(Duration.ofSeconds(10))) {
                token = lease.fencingToken();
            }
            assertTrue(token > 0, "fencing token " + token);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertNotNull(registry.find("baton.acquire").tag("outcome", "granted").timer(),
                    "baton.acquire meter in " + registry.getMeters().stream().map(m -> m.getId().getName()).toList());
            assertEquals(1, registry.find("baton.acquire").tag("outcome", "granted").timer().count());
        }
    }
}
