package dev.baton.zookeeper;

import dev.baton.spi.LockMode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Znode names: lock names encoded whole, members parsed from Curator's protected sequential names, root paths. */
class ZooKeeperNamesTest {

    @Test
    void namesZooKeeperWouldRefuseAreEncodedAndDecodedWhole() {
        for (String n : List.of("a/b", ".", "..", "zookeeper", "100%", "é\u0001\uE000\uD83D\uDE00", " x ", "a%2Fb")) {
            String node = ZooKeeperNames.encode(n);
            assertThat(node).matches("[A-Za-z0-9_%-]+");
            assertThat(ZooKeeperNames.decode(node)).contains(n);
        }
        assertThat(ZooKeeperNames.encode("%")).isNotEqualTo(ZooKeeperNames.encode("%25"));
        assertThat(ZooKeeperNames.decode("%2")).isEmpty();
        assertThat(ZooKeeperNames.decode("a%2fb")).as("lower-case hex is not Baton's").isEmpty();
        assertThat(ZooKeeperNames.decode("a.b")).as("a raw '.' is not Baton's").isEmpty();
    }

    @Test
    void membersAreParsedFromProtectedSequentialNames() {
        String uuid = "2b1d6f0e-4c7a-4f7e-9a3b-0c1d2e3f4a5b";
        assertThat(ZooKeeperNames.member("_c_" + uuid + "-x-0000000042")).get()
                .satisfies(m -> {
                    assertThat(m.mode()).isEqualTo(LockMode.EXCLUSIVE);
                    assertThat(m.sequence()).isEqualTo(42);
                    assertThat(m.readWrite()).isFalse();
                });
        assertThat(ZooKeeperNames.member("_c_" + uuid + "-r-0000000001")).get()
                .satisfies(m -> assertThat(m.mode()).isEqualTo(LockMode.READ));
        assertThat(ZooKeeperNames.member("w-0000000007")).get()
                .satisfies(m -> assertThat(m.mode()).isEqualTo(LockMode.WRITE));
        assertThat(ZooKeeperNames.member("lock-0000000001")).isEmpty();
        assertThat(ZooKeeperNames.member("_c_short-x-0000000001")).isEmpty();
        assertThat(ZooKeeperNames.member("x-abc")).isEmpty();
    }

    @Test
    void rootPathsAreValidated() {
        assertThat(ZooKeeperNames.validateRoot("/baton/locks")).isEqualTo("/baton/locks");
        assertThatThrownBy(() -> ZooKeeperNames.validateRoot("baton")).hasMessageContaining("not a valid znode path");
        assertThatThrownBy(() -> ZooKeeperNames.validateRoot("/a//b")).hasMessageContaining("not a valid znode path");
        assertThatThrownBy(() -> ZooKeeperNames.validateRoot("/")).hasMessageContaining("must not be '/'");
        assertThatThrownBy(() -> ZooKeeperNames.validateRoot("/zookeeper")).hasMessageContaining("/zookeeper");
        assertThatThrownBy(() -> ZooKeeperNames.validateRoot(null)).hasMessageContaining("must not be null");
    }
}
