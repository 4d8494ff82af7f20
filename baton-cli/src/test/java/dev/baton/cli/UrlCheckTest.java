package dev.baton.cli;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static dev.baton.cli.BatonCommandTest.baton;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A URL is checked before any connection: what is wrong with it is a usage error (64) naming the part, never a
 * connection attempt (69) or a success on another server than the one written.
 */
class UrlCheckTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            redis://127.0.0.1:0                              | port 0
            redis://127.0.0.1:65536                          | port 65536
            redis://127.0.0.1:abc                            | port 'abc'
            redis://127.0.0.1:6379/x                         | database 'x'
            redis://:6379                                    | no host
            rediss://127.0.0.1:99999                         | port 99999
            jdbc:postgresql://127.0.0.1:65536/test           | port 65536
            jdbc:postgresql://127.0.0.1:x/test               | port 'x'
            jdbc:mariadb://127.0.0.1:0/test                  | port 0
            jdbc:mysql://127.0.0.1:3306,127.0.0.1:70000/test | port 70000
            zookeeper://127.0.0.1:0                          | port 0
            zookeeper://127.0.0.1:65536                      | port 65536
            zookeeper://127.0.0.1:2181,127.0.0.1:x           | port 'x'
            zookeeper://127.0.0.1:2181,/app                  | no host
            zookeeper://127.0.0.1:2181/a//b                  | chroot '/a//b'
            zookeeper://127.0.0.1:2181/a/                    | chroot '/a/'
            zookeeper://127.0.0.1:2181/a/../b                | chroot '/a/../b'
            zookeeper://127.0.0.1:2181/app?session=5s        | query string
            zookeeper://127.0.0.1:2181?x=1                   | query string
            zookeeper://127.0.0.1:2181/app#x                 | '#x'
            redis-sentinel://127.0.0.1:26379                 | names the primary
            redis-sentinel://127.0.0.1:26379,127.0.0.1:0#m   | port 0
            rediss-sentinel://127.0.0.1:26379#mymaster       | Sentinel
            redis-socket:///tmp/redis.sock                   | unix socket
            redis+socket:///tmp/redis.sock                   | unix socket
            """)
    void aBadUrlIsAUsageErrorNamingWhatIsWrongBeforeAnyConnection(String url, String named) {
        BatonCommandTest.Result r = baton("list", "--url", url);

        assertThat(r.status()).as(r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains(named).doesNotContain("cannot reach").doesNotContain("unreachable");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            zookeeper://digest:zq7w8k@127.0.0.1:2181/app     | digest credentials
            jdbc:postgresql://postgres:zq7w8k@127.0.0.1:5432/test | URL's parameters
            jdbc:mariadb://root:zq7w8k@127.0.0.1:3306/test   | URL's parameters
            redis://:zq7/w8k@127.0.0.1:6379                  | %2F
            redis://zq7/w8k@127.0.0.1:6379                   | %2F
            redis://:zq7@w8k@127.0.0.1:6379                  | %40
            """)
    void credentialsWrittenWhereTheBackendCannotTakeThemAreRefusedWithoutPrintingThem(String url, String named) {
        BatonCommandTest.Result r = baton("list", "--url", url);

        assertThat(r.status()).as(r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains(named).doesNotContain("zq7").doesNotContain("w8k");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            zookeeper://127.0.0.1:2181/app?x=1               | query string
            redis://127.0.0.1:0                              | port 0
            jdbc:postgresql://127.0.0.1:65536/test           | port 65536
            redis://:zq7/w8k@127.0.0.1:6379                  | %2F
            """)
    void batonCheckChecksItsUrlsTheSameWay(String url, String named) {
        BatonCommandTest.Result r = baton("check", "--url", url, "--profile", "quick", "--duration", "1s",
                "--workers", "2", "--faults", "none");

        assertThat(r.status()).as(r.out() + r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains(named).doesNotContain("zq7").doesNotContain("w8k");
    }
}
