package dev.baton.redis;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RedisKeysTest {

    /** The hash tag is what Redis Cluster hashes: between the first '{' and the first '}' after it. */
    private static String hashTag(String key) {
        int open = key.indexOf('{');
        int close = key.indexOf('}', open + 1);
        return open >= 0 && close > open + 1 ? key.substring(open + 1, close) : key;
    }

    @Test
    void everyKeyOfOneLockSharesOneNonEmptyHashTagWhateverTheName() {
        for (String name : new String[] {"plain", "}", "}x", "a}b{c", "{x}", "100%", "%7D", "emoji 🔒 ü"}) {
            RedisKeys.Lock k = RedisKeys.Lock.of("baton:", name);
            String tag = hashTag(k.exclusive());
            assertThat(tag).as(name).isNotEmpty();
            for (String key : new String[] {k.counter(), k.line(), k.lineExpiry(), k.writer(), k.readers(),
                    k.writerClaims()}) {
                assertThat(hashTag(key)).as(name + " " + key).isEqualTo(tag);
            }
            assertThat(RedisKeys.nameOf("baton:", k.exclusive())).isEqualTo(name);
            assertThat(RedisKeys.nameOf("baton:", k.writer())).isEqualTo(name);
            assertThat(RedisKeys.nameOf("baton:", k.line())).isEqualTo(name);
        }
        assertThat(RedisKeys.Lock.of("baton:", "}").base()).isNotEqualTo(RedisKeys.Lock.of("baton:", "%7D").base());
        assertThat(RedisKeys.nameOf("baton:", "baton:{x}:t")).isNull();
        assertThat(RedisKeys.nameOf("baton:", "baton:{x}:qx")).isNull();
        assertThat(RedisKeys.nameOf("baton:", "other:{x}:x")).isNull();
    }

    @Test
    void connectionNamesHaveNoSpacesOrControlCharacters() {
        assertThat(RedisLockBackend.connectionName("my host/12/ab\n")).isEqualTo("baton:my_host/12/ab_");
    }

    @Test
    void prefixesAreValidated() {
        assertThat(RedisKeys.validatePrefix("baton:")).isEqualTo("baton:");
        assertThatThrownBy(() -> RedisKeys.validatePrefix("a}")).hasMessageContaining("no braces");
        assertThatThrownBy(() -> RedisKeys.validatePrefix("a?")).hasMessageContaining("not allowed");
    }

    @Test
    void scriptsAreNamedByTheirSha1() {
        assertThat(Scripts.ACQUIRE.sha()).hasSize(40).isNotEqualTo(Scripts.RELEASE.sha());
    }
}
