package dev.baton.cli;

import dev.baton.internal.Secrets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every URL form of every backend that can carry a secret, and what messages print instead: the one redaction
 * function, on a URL alone and on text that contains one.
 */
class UrlSecretsTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            # Redis (Lettuce): [[user:]password@]; a user-info without a colon is the password, and authenticates
            redis://s3cret@127.0.0.1:6379                         | redis://***@127.0.0.1:6379
            redis://:s3cret@h:6379/0                              | redis://:***@h:6379/0
            redis://default:s3cret@h                              | redis://default:***@h
            rediss://s3cret@h:6380                                | rediss://***@h:6380
            rediss://u:s3cret@h:6380/2?timeout=5s                 | rediss://u:***@h:6380/2?timeout=5s
            redis+ssl://s3cret@h                                  | redis+ssl://***@h
            redis-sentinel://s3cret@h1:26379,h2:26379/0#mymaster  | redis-sentinel://***@h1:26379,h2:26379/0#mymaster
            redis-sentinel://u:s3cret@h1:26379#mymaster           | redis-sentinel://u:***@h1:26379#mymaster
            rediss-sentinel://s3cret@h1:26379#mymaster            | rediss-sentinel://***@h1:26379#mymaster
            redis-socket://s3cret@/tmp/redis.sock                 | redis-socket://***@/tmp/redis.sock
            redis://:pa/ss@h:6379                                 | redis://:***@h:6379
            redis://pa/ss@h                                       | redis://***@h
            redis://:pa%2Fss@h                                    | redis://:***@h
            redis://:p@ss@h:6379                                  | redis://:***@h:6379
            redis://h:6379/0?timeout=5s                           | redis://h:6379/0?timeout=5s
            # JDBC: user:password@, and every parameter that names a password, in any case, after ? & ; or (
            jdbc:postgresql://h/db?user=u&password=s3cret&sslpassword=k3y&ssl=true | jdbc:postgresql://h/db?user=u&password=***&sslpassword=***&ssl=true
            jdbc:postgresql://h/db?password=s3cret                | jdbc:postgresql://h/db?password=***
            jdbc:postgresql://h/db?user=u&PassWord=pa/ss&x=1      | jdbc:postgresql://h/db?user=u&PassWord=***&x=1
            jdbc:postgresql://h/db?sslPassword=k3y                | jdbc:postgresql://h/db?sslPassword=***
            jdbc:postgresql://u:s3cret@h:5432/db                  | jdbc:postgresql://u:***@h:5432/db
            jdbc:mariadb://h:3306/db?user=u&password=s3cret&trustStorePassword=t1&keyStorePassword=k1 | jdbc:mariadb://h:3306/db?user=u&password=***&trustStorePassword=***&keyStorePassword=***
            jdbc:mysql://u:s3cret@h:3306/db                       | jdbc:mysql://u:***@h:3306/db
            jdbc:mariadb://u:hun@ter2@h:3306/db                   | jdbc:mariadb://u:***@h:3306/db
            jdbc:mariadb://address=(host=h)(port=3306)(user=u)(password=s3cret)/db | jdbc:mariadb://address=(host=h)(port=3306)(user=u)(password=***)/db
            jdbc:mariadb://root@h:3306/db                         | jdbc:mariadb://root@h:3306/db
            jdbc:h2:mem:x;USER=sa;PASSWORD=s3cret                 | jdbc:h2:mem:x;USER=sa;PASSWORD=***
            jdbc:postgresql://h:5432/db?user=u                    | jdbc:postgresql://h:5432/db?user=u
            jdbc:sqlite:/tmp/x@y.db                               | jdbc:sqlite:/tmp/x@y.db
            # ZooKeeper: digest credentials written as user-info
            zookeeper://u:s3cret@h:2181/app                       | zookeeper://u:***@h:2181/app
            zookeeper://h:2181,h2:2181/app                        | zookeeper://h:2181,h2:2181/app
            # in text: messages, a command line, JSON
            cannot reach redis://s3cret@h:1 (unreachable): refused | cannot reach redis://***@h:1 (unreachable): refused
            baton check --url redis://s3cret@h --json x.json      | baton check --url redis://***@h --json x.json
            "command": "baton check --url 'rediss://u:s3cret@h'"  | "command": "baton check --url 'rediss://u:***@h'"
            """)
    void everyFormOfSecretIsHidden(String written, String shown) {
        assertThat(Secrets.hide(written)).isEqualTo(shown);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            redis://:pa%2Fs3cret@h                     | AUTH failed for pa/s3cret      | AUTH failed for ***
            redis://s3cret@h                           | WRONGPASS s3cret               | WRONGPASS ***
            jdbc:postgresql://h/db?password=s3%26cret  | password s3&cret rejected       | password *** rejected
            jdbc:postgresql://h/db?sslpassword=k3y     | cannot read key with k3y        | cannot read key with ***
            redis-sentinel://dpw@h:26379/0?sentinelPassword=sp#mymaster | sentinel refused sp | sentinel refused ***
            redis-sentinel://h:26379?sentinelPassword=s%2Fp%40ss#m | WRONGPASS s/p@ss or s%2Fp%40ss | WRONGPASS *** or ***
            """)
    void aUrlsSecretsAreRemovedFromAnyTextAlsoAsTheDriverDecodedThem(String url, String text, String scrubbed) {
        assertThat(DatabaseUrl.parse(url, "--url").scrub(text)).isEqualTo(scrubbed);
    }
}
