package dev.baton.checker;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ModesTest {
    @Test
    void poolsByName() {
        assertThat(Pool.byId("autocommit-off")).isEqualTo(Pool.AUTOCOMMIT_OFF);
        assertThat(Pool.byId("PgBouncer")).isEqualTo(Pool.PGBOUNCER);
        assertThatThrownBy(() -> Pool.byId("tiny")).hasMessageContaining("default, autocommit-off, small, pgbouncer");
    }

    @Test
    void runOnceIsAKnownStrategyWithItsDurations() {
        assertThat(Strategies.byName("run-once")).isInstanceOf(JdbcRunOnceStrategy.class);
        assertThat(JdbcRunOnceStrategy.atMostFor(Duration.ofSeconds(2))).isEqualTo(Duration.ofSeconds(2));
        assertThat(JdbcRunOnceStrategy.atLeastFor(Duration.ofSeconds(2))).isEqualTo(Duration.ofMillis(500));
    }

    @Test
    void onlyTheSessionStrategyRefusesPgBouncer() {
        assertThat(Strategies.byName("session").refuses(Pool.PGBOUNCER)).isPresent();
        assertThat(Strategies.byName("session").refuses(Pool.SMALL)).isEmpty();
        assertThat(Strategies.byName("lease").refuses(Pool.PGBOUNCER)).isEmpty();
    }

    @Test
    void poolsThatDoNotApplyAreRefusedWithAReason() {
        CheckStrategy lease = Strategies.byName("lease");
        assertThatThrownBy(() -> lease.validate("jdbc:mariadb://127.0.0.1:3306/test", Pool.PGBOUNCER))
                .hasMessageContaining("PgBouncer speaks PostgreSQL only");
        assertThatThrownBy(() -> lease.validate("jdbc:sqlite:/tmp/x.db", Pool.SMALL)).hasMessageContaining("SQLite");
    }

    @Test
    void restartOnlyOfALocalServer() {
        assertThat(ServerRestart.of("jdbc:postgresql://127.0.0.1:5432/test").description()).contains("pg_ctl restart")
                .contains("port 5432");
        assertThat(ServerRestart.of("jdbc:mariadb://localhost/test").description()).contains("port 3306");
        assertThatThrownBy(() -> ServerRestart.of("jdbc:sqlite:/tmp/x.db")).hasMessageContaining("with a //host part")
                .hasMessageNotContaining("/tmp/x.db");
        assertThatThrownBy(() -> ServerRestart.of("jdbc:postgresql://192.0.2.1/test")).hasMessageContaining("not this host");
        assertThat(ServerRestart.of("redis://127.0.0.1:6379").description()).contains("SHUTDOWN NOSAVE");
        assertThat(ServerRestart.of("redis://:pw@localhost/2").description()).contains("no persistence");
        assertThatThrownBy(() -> ServerRestart.of("redis://192.0.2.1:6379")).hasMessageContaining("not this host");
        assertThatThrownBy(() -> ServerRestart.of("jdbc:redis://127.0.0.1")).hasMessageContaining("not a PostgreSQL");
        assertThat(ServerRestart.of("zookeeper://127.0.0.1:2181").description()).contains("SIGTERM").contains("2181");
        assertThatThrownBy(() -> ServerRestart.of("zookeeper://192.0.2.1:2181")).hasMessageContaining("not this host");
    }

    /** Run as {@code baton check …}, the report said "command: baton check check …". */
    @Test
    void theReportedCommandLineNamesCheckOnceUnderBaton() {
        assertThat(CheckCommand.commandLine(List.of("check", "--url", "redis://127.0.0.1")))
                .isEqualTo("baton check --url redis://127.0.0.1");
        assertThat(CheckCommand.commandLine(List.of("--url", "redis://127.0.0.1")))
                .isEqualTo("baton check --url redis://127.0.0.1");
    }

    @Test
    void aRedisUrlIsCheckedWithTheRedisStrategyUnlessAnotherIsNamed() {
        assertThat(Strategies.forUrl("lease", "redis://127.0.0.1:6379").name()).isEqualTo("redis");
        assertThat(Strategies.forUrl("lease", "REDISS://host").name()).isEqualTo("redis");
        assertThat(Strategies.forUrl("lease", "jdbc:postgresql://127.0.0.1/test").name()).isEqualTo("lease");
        assertThat(Strategies.byName("redis").name()).isEqualTo("redis");
        assertThatThrownBy(() -> Strategies.forUrl("session", "redis://127.0.0.1").validate("redis://127.0.0.1"))
                .hasMessageContaining("jdbc:postgresql:");
        assertThatThrownBy(() -> new RedisStrategy().validate("jdbc:postgresql://127.0.0.1/test"))
                .hasMessageContaining("redis://");
        assertThat(RedisStrategy.prefix("baton_check")).isEqualTo("baton_check:");
        assertThat(Strategies.forUrl("lease", "zookeeper://127.0.0.1:2181").name()).isEqualTo("zookeeper");
        assertThat(ZooKeeperStrategy.connectString("zookeeper://127.0.0.1/chroot")).isEqualTo("127.0.0.1:2181/chroot");
        assertThat(ZooKeeperStrategy.root("baton_check")).isEqualTo("/baton_check");
        new ZooKeeperStrategy().validate("zookeeper://a:2181,b:2181"); // an ensemble
        assertThatThrownBy(() -> new ZooKeeperStrategy().validate("zookeeper://a:2181,,b:2181"))
                .hasMessageContaining("an ensemble");
    }

    @Test
    void oneRestartIsEnoughForAVerdictFiveOfAnythingElse() {
        assertThat(ScenarioSpec.minHits("restart")).isEqualTo(1);
        assertThat(ScenarioSpec.minHits("pause")).isEqualTo(5);
    }
}
