package dev.baton.spring.boot;

import dev.baton.LockClient;
import dev.baton.LockInfo;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import java.util.List;

/**
 * The {@code baton} health indicator: up when the lock client's backend answers a listing of its locks
 * ({@link LockClient#list()}: a query, a {@code SCAN} of the lock keys, a read of the lock znodes), with the backend,
 * the client id and how many locks the backend shows; down, with the error, when it does not.
 */
public class BatonHealthIndicator extends AbstractHealthIndicator {
    private final LockClient client;

    public BatonHealthIndicator(LockClient client) {
        super("Baton lock backend health check failed");
        this.client = client;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("backend", client.backend()).withDetail("clientId", client.clientId());
        List<LockInfo> locks = client.list();
        builder.up().withDetail("locks", locks.size());
    }
}
