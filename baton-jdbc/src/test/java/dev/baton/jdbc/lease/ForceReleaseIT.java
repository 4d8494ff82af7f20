package dev.baton.jdbc.lease;

import dev.baton.ForcedRelease;
import dev.baton.Lease;
import dev.baton.LockClient;
import dev.baton.LockException;
import dev.baton.LockLostException;
import dev.baton.jdbc.Dialect;
import dev.baton.jdbc.JdbcLockClient;
import dev.baton.jdbc.fixtures.ForwardingLockClient;
import dev.baton.jdbc.fixtures.JdbcFixture;
import dev.baton.jdbc.fixtures.MariaDbFixture;
import dev.baton.jdbc.fixtures.MySqlDialectOnMariaDbFixture;
import dev.baton.jdbc.fixtures.PostgresFixture;
import dev.baton.jdbc.fixtures.SqliteFixture;
import dev.baton.testkit.ClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link JdbcLockClient#forceRelease}, the operator's lever behind {@code baton release}, on every dialect. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ResourceLock(SqliteFixture.FILE_LOCK) // a cut-off in another class cuts this one off too (see there)
class ForceReleaseIT {
    private final List<JdbcFixture> fixtures = new ArrayList<>();

    Stream<JdbcFixture> fixtures() {
        if (fixtures.isEmpty()) {
            fixtures.add(new PostgresFixture());
            fixtures.add(new MariaDbFixture());
            fixtures.add(new MySqlDialectOnMariaDbFixture());
            fixtures.add(new SqliteFixture());
        }
        return fixtures.stream();
    }

    @AfterAll
    void close() {
        fixtures.forEach(JdbcFixture::close);
    }

    private static String unique(String base) {
        return base + "-" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    }

    private static JdbcLockClient jdbc(LockClient client) {
        return (JdbcLockClient) ((ForwardingLockClient) client).delegate();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void forceReleaseEndsTheLiveGrantOnlyAndItsHolderLosesIt(JdbcFixture fixture) throws Exception {
        String name = unique("force");
        try (LockClient holder = fixture.newClient(ClientConfig.lease(Duration.ofSeconds(2)));
             LockClient operator = fixture.newClient(ClientConfig.defaults());
             LockClient next = fixture.newClient(ClientConfig.defaults())) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockLostException> lost = new CompletableFuture<>();
            held.onLost(lost::complete);

            assertThat(jdbc(operator).forceRelease(name, OptionalLong.of(held.fencingToken() + 1))).isEmpty();
            assertThat(held.isValid()).as("another token releases nothing").isTrue();
            assertThat(next.lock(name).tryAcquire()).isEmpty();

            ForcedRelease released = jdbc(operator).forceRelease(name, OptionalLong.of(held.fencingToken()))
                    .orElseThrow();
            assertThat(released.name()).isEqualTo(name);
            assertThat(released.holder()).isEqualTo(held.holderId());
            assertThat(released.fencingToken()).isEqualTo(held.fencingToken());
            assertThat(released.remaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2));

            try (Lease successor = next.lock(name).tryAcquire().orElseThrow()) {
                assertThat(successor.fencingToken()).isGreaterThan(held.fencingToken());
                assertThat(lost.get(20, TimeUnit.SECONDS).fencingToken()).isEqualTo(held.fencingToken());
                held.close();
                assertThat(jdbc(operator).forceRelease(name, OptionalLong.of(held.fencingToken()))).isEmpty();
                successor.checkValid();
            }
            assertThat(jdbc(operator).forceRelease(name, OptionalLong.empty())).as("free now").isEmpty();
            assertThat(jdbc(operator).forceRelease(unique("never-taken"), OptionalLong.empty())).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void forceReleaseWithoutATokenEndsWhicheverGrantIsLive(JdbcFixture fixture) {
        String name = unique("force-any");
        try (LockClient holder = fixture.newClient(ClientConfig.defaults());
             LockClient operator = fixture.newClient(ClientConfig.defaults())) {
            Lease held = holder.lock(name).acquire(Duration.ofSeconds(5));

            assertThat(jdbc(operator).forceRelease(name, OptionalLong.empty())).get()
                    .extracting(ForcedRelease::fencingToken).isEqualTo(held.fencingToken());
            assertThat(operator.lock(name).tryAcquire()).isPresent();
            assertThatThrownBy(() -> jdbc(operator).forceRelease("", OptionalLong.empty()))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    /** The databases with a session strategy, whose marker row claims a name in the lease table. */
    Stream<JdbcFixture> sessionDatabases() {
        return fixtures().filter(f -> !(f instanceof SqliteFixture));
    }

    private static Dialect dialect(JdbcFixture fixture) {
        if (fixture.forcedDialect() != null) {
            return fixture.forcedDialect();
        }
        return fixture instanceof PostgresFixture ? Dialect.POSTGRESQL : Dialect.MARIADB;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sessionDatabases")
    void forceReleaseNeverDeletesTheSessionStrategysClaimOnAName(JdbcFixture fixture) throws Exception {
        String name = unique("force-marker");
        try (LockClient operator = fixture.newClient(ClientConfig.defaults())) {
            try (Connection admin = fixture.admin();
                 PreparedStatement ps = admin.prepareStatement(
                         LeaseTable.of(dialect(fixture), fixture.table()).sessionMarkerInsert())) {
                ps.setString(1, name);
                ps.setString(2, LeaseTable.SESSION_MARKER);
                ps.executeUpdate();
                if (!admin.getAutoCommit()) {
                    admin.commit();
                }
            }
            assertThatThrownBy(() -> jdbc(operator).forceRelease(name, OptionalLong.empty()))
                    .isInstanceOf(LockException.class).hasMessageContaining("session strategy")
                    .hasMessageContaining(name);
            assertThatThrownBy(() -> operator.lock(name).tryAcquire())
                    .as("the claim is still there").isInstanceOf(LockException.class)
                    .hasMessageContaining("session strategy");
        }
    }
}
