package dev.baton.zookeeper;

import dev.baton.ForcedRelease;
import dev.baton.LockBackendException;
import dev.baton.LockClient;
import dev.baton.LockNames;
import dev.baton.spi.AbstractClientBuilder;
import dev.baton.spi.ClientSettings;
import dev.baton.spi.DelegatingLockClient;
import dev.baton.spi.LockClients;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * Builds ZooKeeper {@link LockClient}s on Curator: the same API, options and exceptions as the other backends.
 * Locks are re-entrant per thread (in the client, no round trip) and fair: first come, first served.
 *
 * <p><b>How a lock is held.</b> Each lock has a parent znode {@code <rootPath>/<encoded name>} (a container, which
 * the server removes some time after it empties). An acquisition creates a protected ephemeral-sequential member
 * node under it whose data is the holder id; the lowest member holds the lock, and every other waits, watching only
 * the member just ahead of it (no herd), in arrival order. A waiter that gives up (timeout, interrupt, try-once)
 * deletes its node. Read-write locks keep read and write members in one line under the same parent: a writer waits
 * for every earlier member, a reader only for earlier writers, so a waiting writer holds back later readers.
 *
 * <p><b>Fencing token</b> = the {@code czxid} of the holder's own node: the zxid of the transaction that created
 * it, which strictly increases across the whole ensemble — across holders, clients, a parent's deletion and a
 * server restart (an ensemble's new leader raises the epoch in its upper 32 bits; a standalone server continues its
 * counter from its transaction log). Never the sequence suffix, which is 32-bit and starts again when a parent is
 * recreated. It assumes the servers keep their data directory: a server started on an empty one counts from 0.
 * A read-write lock's grants are made together (the readers behind one writer) and may be seen late by their
 * clients, so a read or write grant's token is the zxid of the line's last change in the read that showed the grant
 * (the parent's {@code pzxid}, at least the node's {@code czxid}): never lower than the token of a grant the server
 * answered before, a writer's above every grant before it; readers that hold together may share a token.
 *
 * <p><b>What ends a hold: the ZooKeeper session.</b> A member node lives as long as the session that created it.
 * The client's lease time is tied to the session timeout: by default it <em>is</em> the session timeout the server
 * negotiated, and a lease time you set must not exceed it. Renewal is one round trip per interval per 1,000 leases
 * (a read-only {@code multi}: the session is alive and shows each lease's node with its {@code czxid}; ZooKeeper
 * 3.6+), so a lease's conservative deadline (send time of the last successful renewal +
 * lease time) passes no later than the server can expire the session and hand the lock to another client.
 * Connection states (Curator's) act at once: <b>SUSPENDED</b> (the connection dropped) makes every lease of the
 * client uncertain — {@code isValid()} false, not lost, {@code checkValid()} asks the server; <b>RECONNECTED</b> on
 * the same session makes each lease valid again only after one {@code exists} shows its node with
 * {@code ephemeralOwner} = the current session and {@code czxid} = the token (else it is lost); <b>LOST</b> (the
 * session expired, or Curator gave it up after a session timeout suspended) reports every lease lost, once. A
 * release that cannot reach the server deletes the node when the connection returns on the same session; if the
 * session ends first, the server deleted it.
 *
 * <p><b>Connections.</b> Given a connect string, Baton creates, starts and (with the lock client) closes a
 * {@link CuratorFramework} of its own, with the session timeout {@link Builder#sessionTimeout} (default: the lease
 * time, 10 s unless set). Given your started {@link CuratorFramework}, Baton uses its session and retry policy, and
 * never closes it. Either way {@code build()} waits until it is connected.
 *
 * <pre>{@code
 * try (LockClient locks = ZooKeeperLocks.builder("zk1:2181,zk2:2181,zk3:2181").build()) {
 *     try (Lease lease = locks.lock("nightly-report").acquire(Duration.ofSeconds(10))) {
 *         store.write(report, lease.fencingToken());
 *     }
 * }
 * }</pre>
 */
public final class ZooKeeperLocks {
    /** The default parent of every lock's znode. */
    public static final String DEFAULT_ROOT_PATH = ZooKeeperNames.DEFAULT_ROOT;
    /** The default wait for a connection at build time, and the connection timeout of Baton's own Curator client. */
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(15);

    private ZooKeeperLocks() {
    }

    /**
     * A builder over your started {@link CuratorFramework}: Baton uses its session and never closes it.
     *
     * @throws IllegalArgumentException if null
     */
    public static Builder builder(CuratorFramework curator) {
        if (curator == null) {
            throw new IllegalArgumentException("curatorFramework must not be null");
        }
        return new Builder(curator, null);
    }

    /**
     * A builder over a connect string ({@code host:port[,host:port...][/chroot]}): Baton creates a
     * {@link CuratorFramework} of its own and closes it with the lock client.
     *
     * @throws IllegalArgumentException if null or blank
     */
    public static Builder builder(String connectString) {
        if (connectString == null || connectString.isBlank()) {
            throw new IllegalArgumentException("connectString must not be null or blank");
        }
        return new Builder(null, connectString);
    }

    /** Settings of a ZooKeeper lock client; see {@link AbstractClientBuilder} for the shared ones. */
    public static final class Builder extends AbstractClientBuilder<Builder> {
        private final CuratorFramework curator;
        private final String connectString;
        private String rootPath = DEFAULT_ROOT_PATH;
        private Duration sessionTimeout;
        private Duration connectionTimeout = DEFAULT_CONNECTION_TIMEOUT;
        private Duration explicitLeaseTime;
        private boolean explicitRenewInterval;

        private Builder(CuratorFramework curator, String connectString) {
            this.curator = curator;
            this.connectString = connectString;
        }

        /**
         * The lease time, at most the session timeout the server negotiates (default: that session timeout). A
         * shorter lease time makes the client report a lease lost sooner than the server ends its session.
         *
         * @throws IllegalArgumentException as {@link AbstractClientBuilder#leaseTime}
         */
        @Override
        public Builder leaseTime(Duration leaseTime) {
            super.leaseTime(leaseTime);
            this.explicitLeaseTime = leaseTime;
            return this;
        }

        /** How often every lease's node is read on its session, a round trip per 1,000 (default: a third of the lease). */
        @Override
        public Builder renewInterval(Duration renewInterval) {
            super.renewInterval(renewInterval);
            this.explicitRenewInterval = true;
            return this;
        }

        /**
         * The znode under which every lock's parent lives (default {@value ZooKeeperLocks#DEFAULT_ROOT_PATH}): an
         * absolute, valid znode path, not {@code /} and not under {@code /zookeeper}.
         *
         * @throws IllegalArgumentException naming what is wrong with it
         */
        public Builder rootPath(String rootPath) {
            this.rootPath = ZooKeeperNames.validateRoot(rootPath);
            return this;
        }

        /**
         * The session timeout Baton's own Curator client asks for (default: the lease time if set, else 10 s; 100 ms
         * to 1 h). The server clamps it to its {@code minSessionTimeout}..{@code maxSessionTimeout}; the lease time
         * follows the negotiated value. Only for a connect string: your {@link CuratorFramework} has its own.
         *
         * @throws IllegalArgumentException if out of bounds
         * @throws IllegalStateException    if this builder is over your {@link CuratorFramework}
         */
        public Builder sessionTimeout(Duration sessionTimeout) {
            if (curator != null) {
                throw new IllegalStateException("sessionTimeout applies to a connect string; your CuratorFramework"
                        + " keeps its own session timeout (set it with CuratorFrameworkFactory.builder().sessionTimeoutMs)");
            }
            this.sessionTimeout = within("sessionTimeout", sessionTimeout, Duration.ofMillis(100), Duration.ofHours(1),
                    "a holder that vanishes keeps its locks for up to one session timeout");
            return this;
        }

        /**
         * How long {@link #build()} waits for a connection, and the connection timeout of Baton's own Curator client
         * (default 15 s; 100 ms to 10 min).
         */
        public Builder connectionTimeout(Duration connectionTimeout) {
            this.connectionTimeout = within("connectionTimeout", connectionTimeout, Duration.ofMillis(100),
                    Duration.ofMinutes(10), "an operation waits that long for a lost connection");
            return this;
        }

        /**
         * Connects (creating and starting Baton's own Curator client for a connect string), reads the negotiated
         * session timeout and starts the lock client.
         *
         * @throws LockBackendException     if ZooKeeper cannot be reached within the connection timeout
         * @throws IllegalArgumentException if the lease time exceeds the negotiated session timeout, or the renewal
         *                                  interval is not shorter than the lease time
         * @throws IllegalStateException    if your {@link CuratorFramework} was not started, or was closed
         */
        @Override
        public ZooKeeperLockClient build() {
            ClientSettings base = settings();
            if (explicitLeaseTime != null && sessionTimeout != null && explicitLeaseTime.compareTo(sessionTimeout) > 0) {
                throw new IllegalArgumentException("leaseTime (" + explicitLeaseTime.toMillis() + " ms) must not exceed"
                        + " sessionTimeout (" + sessionTimeout.toMillis() + " ms): a client cut off for longer than"
                        + " the session timeout has lost its session and its locks");
            }
            CuratorFramework c = curator;
            String endpoint;
            if (c == null) {
                Duration requested = sessionTimeout != null ? sessionTimeout
                        : explicitLeaseTime != null ? explicitLeaseTime : DEFAULT_LEASE_TIME;
                int connectMs = (int) connectionTimeout.toMillis();
                c = CuratorFrameworkFactory.builder()
                        .connectString(connectString)
                        .sessionTimeoutMs((int) requested.toMillis())
                        .connectionTimeoutMs(connectMs)
                        .retryPolicy(new BoundedExponentialBackoffRetry(50, 1000, 3))
                        .build();
                c.start();
                endpoint = connectString;
            } else {
                if (c.getState() != CuratorFrameworkState.STARTED) {
                    throw new IllegalStateException("the CuratorFramework is " + c.getState()
                            + "; start() it before building a lock client over it");
                }
                endpoint = "your CuratorFramework";
            }
            ZooKeeperLockBackend backend = null;
            try {
                if (!c.blockUntilConnected((int) connectionTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new LockBackendException("zookeeper (" + endpoint + ")", "cannot connect to ZooKeeper at "
                            + endpoint + " within " + connectionTimeout.toMillis() + " ms", null);
                }
                Duration negotiated = Duration.ofMillis(c.getZookeeperClient().getZooKeeper().getSessionTimeout());
                ClientSettings settings = tie(base, negotiated);
                backend = new ZooKeeperLockBackend(c, curator == null, rootPath, endpoint);
                return new Client(LockClients.create(backend, settings), backend);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                closeOwn(c, backend);
                throw new LockBackendException("zookeeper (" + endpoint + ")", "interrupted while connecting", e);
            } catch (RuntimeException e) {
                closeOwn(c, backend);
                throw e;
            } catch (Exception e) {
                closeOwn(c, backend);
                throw new LockBackendException("zookeeper (" + endpoint + ")", "cannot read the session: " + e, e);
            }
        }

        private void closeOwn(CuratorFramework c, ZooKeeperLockBackend backend) {
            if (backend != null) {
                backend.close(); // closes c too if it is Baton's
            } else if (curator == null) {
                c.close();
            }
        }

        /** The settings with the lease time tied to the negotiated session timeout. */
        private ClientSettings tie(ClientSettings base, Duration negotiated) {
            Duration lease = explicitLeaseTime != null ? explicitLeaseTime : negotiated;
            if (lease.compareTo(negotiated) > 0) {
                throw new IllegalArgumentException("leaseTime (" + lease.toMillis() + " ms) must not exceed the"
                        + " ZooKeeper session timeout the server negotiated (" + negotiated.toMillis() + " ms): a"
                        + " client cut off for longer than the session timeout has lost its session and its locks");
            }
            Duration renew = explicitRenewInterval ? base.renewInterval() : lease.dividedBy(3);
            if (renew.compareTo(lease) >= 0) {
                throw new IllegalArgumentException("renewInterval (" + renew.toMillis() + " ms) must be shorter than"
                        + " the lease time (" + lease.toMillis() + " ms, the negotiated session timeout)");
            }
            return new ClientSettings(lease, renew, base.minPollInterval(), base.maxPollInterval(),
                    base.clientIdPrefix(), base.ticker(), base.clockDriftFactor(), base.observer());
        }
    }

    /** The core client, with the operator's force release. */
    private static final class Client extends DelegatingLockClient implements ZooKeeperLockClient {
        private final ZooKeeperLockBackend backend;

        Client(LockClient core, ZooKeeperLockBackend backend) {
            super(core);
            this.backend = backend;
        }

        @Override
        public Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
            LockNames.validate(name);
            if (token == null) {
                throw new IllegalArgumentException("token must not be null (use OptionalLong.empty())");
            }
            return backend.forceRelease(name, token);
        }
    }
}
