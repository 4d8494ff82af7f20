package dev.baton.jdbc.lease;

import dev.baton.spi.AcquireRequest;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Nobody wakes a waiter: each is told when to look again by {@link dev.baton.spi.AcquireResult.Busy#nextTry},
 * paced by how fast its place in line moves ({@link Line#paced}).
 */
final class PolledWakeUps implements WakeUps {
    private final LeaseTable table;

    PolledWakeUps(LeaseTable table) {
        this.table = table;
    }

    @Override
    public long enqueue(Connection c, AcquireRequest request) throws SQLException {
        table.enqueue(c, request.name(), request.owner(), JdbcLeaseBackend.PLACE_TTL.toMillis());
        return 0;
    }
}
