package dev.baton.cli;

import dev.baton.testkit.OwnServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton run} on servers that cannot keep Baton's guarantees — each a server of this test's own: it is refused
 * with the setting named and the CLI option that opts in (not the Java builder method), and it runs with that option.
 * Before the options existed, the CLI could not be used on such a server at all, and its message named
 * {@code allowUnflushedCommits()} / {@code allowEviction()}.
 */
class BatonServerSettingsIT {

    @Test
    void aMariaDbThatFlushesOnceASecondIsRefusedUnlessAllowUnflushedCommits() throws Exception {
        try (OwnServer mariadb = OwnServer.start(OwnServer.Engine.MARIADB, "--innodb-flush-log-at-trx-commit=0")) {
            BatonAdminIT.Result refused = BatonAdminIT.baton("run", "--url", mariadb.url(), "--lock", "unflushed",
                    "--", "true");
            assertThat(refused.status()).as(refused.err()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(refused.err()).contains("innodb_flush_log_at_trx_commit is 0")
                    .contains("--allow-unflushed-commits").doesNotContain("allowUnflushedCommits()");
            BatonAdminIT.Result allowed = BatonAdminIT.baton("run", "--url", mariadb.url(), "--lock", "unflushed",
                    "--allow-unflushed-commits", "--", "true");
            assertThat(allowed.status()).as(allowed.err()).isZero();
        }
    }

    @Test
    void aRedisThatMayEvictLockKeysIsRefusedUnlessAllowEviction() throws Exception {
        try (OwnServer redis = OwnServer.start(OwnServer.Engine.REDIS, "--maxmemory", "64mb", "--maxmemory-policy",
                "allkeys-lru")) {
            BatonAdminIT.Result refused = BatonAdminIT.baton("run", "--url", redis.url(), "--lock", "evictable",
                    "--", "true");
            assertThat(refused.status()).as(refused.err()).isNotZero();
            assertThat(refused.err()).contains("maxmemory-policy allkeys-lru").contains("--allow-eviction")
                    .doesNotContain("allowEviction()");
            BatonAdminIT.Result allowed = BatonAdminIT.baton("run", "--url", redis.url(), "--lock", "evictable",
                    "--allow-eviction", "--", "true");
            assertThat(allowed.status()).as(allowed.err()).isZero();
        }
    }

    @Test
    void anAllowOptionForAnotherKindOfServerIsAUsageError() throws Exception {
        BatonAdminIT.Result r = BatonAdminIT.baton("run", "--url", "jdbc:sqlite::memory:", "--lock", "x",
                "--allow-eviction", "--", "true");
        assertThat(r.status()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("--allow-eviction is for a Redis URL");
    }
}
