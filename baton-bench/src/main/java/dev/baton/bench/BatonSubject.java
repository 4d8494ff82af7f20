package dev.baton.bench;

import dev.baton.DistributedLock;
import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.spi.AbstractClientBuilder;

import java.time.Duration;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A Baton strategy over a JDBC pool. A new strategy joins the benchmark as one entry in {@link Subjects}:
 * an id, the database and a function from the (counted) pool to a configured builder.
 */
final class BatonSubject implements Subject {
    private final String id;
    private final Servers.Db db;
    private final String waits;
    private final String baseline;
    private final Function<CountingDataSource, AbstractClientBuilder<?>> builder;

    BatonSubject(String id, Servers.Db db, String baseline, String waits, Function<CountingDataSource, AbstractClientBuilder<?>> builder) {
        this.id = id;
        this.db = db;
        this.waits = waits;
        this.baseline = baseline;
        this.builder = builder;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public Kind kind() {
        return Kind.BATON;
    }

    @Override
    public String server() {
        return db.id;
    }

    @Override
    public String library() {
        return "Baton " + Subject.versionOf("dev.baton", "baton-jdbc");
    }

    @Override
    public String waits() {
        return waits;
    }

    @Override
    public String baseline() {
        return baseline;
    }

    @Override
    public boolean manyLocks() {
        return true;
    }

    @Override
    public Client open(String name, Duration leaseTime) {
        String user = name.startsWith("w3") && db == Servers.Db.MARIADB ? Servers.MARIADB_W3_USER : null;
        CountingDataSource ds = Servers.pool(db, name, 4, user);
        LockClient client;
        try {
            AbstractClientBuilder<?> b = builder.apply(ds);
            if (leaseTime != null) {
                b.leaseTime(leaseTime);
            }
            client = b.build();
        } catch (RuntimeException e) {
            ds.close();
            throw e;
        }
        var locks = new ConcurrentHashMap<String, DistributedLock>();
        return new Client() {
            @Override
            public Held acquire(String lock) {
                Lease lease = locks.computeIfAbsent(lock, client::lock).acquire();
                return new Held() {
                    @Override
                    public void release() {
                        lease.close();
                    }

                    @Override
                    public boolean valid() {
                        return lease.isValid();
                    }
                };
            }

            @Override
            public long statements() {
                return ds.statements.sum();
            }

            @Override
            public long renewalStatements() {
                return ds.renewalStatements.sum();
            }

            @Override
            public void close() {
                try {
                    client.close();
                } finally {
                    ds.close();
                }
            }
        };
    }
}
