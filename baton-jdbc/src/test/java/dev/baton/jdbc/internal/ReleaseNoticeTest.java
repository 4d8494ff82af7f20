package dev.baton.jdbc.internal;

import dev.baton.spi.ReleaseListener;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The release notice's payload: the head of the line named, or everyone, whatever the lock's name holds. */
class ReleaseNoticeTest {
    private final List<String> heard = new ArrayList<>();
    private final ReleaseListener listener = new ReleaseListener() {
        @Override
        public void released(String name) {
            heard.add("all of [" + name + "]");
        }

        @Override
        public void released(String name, String owner) {
            heard.add("[" + owner + "] of [" + name + "]");
        }

        @Override
        public void resynchronize() {
            heard.add("resync");
        }
    };

    @Test
    void aNoticeNamingTheHeadWakesOnlyThatOwner() {
        ReleaseNotice.deliver("14:host/42/abc#17nightly", listener);
        assertThat(heard).containsExactly("[host/42/abc#17] of [nightly]");
    }

    @Test
    void theOwnersLengthIsCountedInCodePointsAsPostgresCountsCharacters() {
        String owner = "h\uD83D\uDE00st/1/a#2"; // a character outside the BMP: two Java chars, one code point
        ReleaseNotice.deliver(owner.codePointCount(0, owner.length()) + ":" + owner + "12:3:x", listener);
        assertThat(heard).containsExactly("[" + owner + "] of [12:3:x]");
    }

    @Test
    void aNoticeToEveryoneKeepsANameThatLooksLikeAPrefix() {
        ReleaseNotice.deliver(ReleaseNotice.toEveryone("3:abc"), listener);
        ReleaseNotice.deliver(ReleaseNotice.toEveryone(""), listener);
        assertThat(heard).containsExactly("all of [3:abc]", "all of []");
    }

    @Test
    void aBareNameOrAMalformedPrefixWakesEveryWaiterOfThePayload() {
        ReleaseNotice.deliver("nightly", listener);
        ReleaseNotice.deliver("a:b", listener);
        ReleaseNotice.deliver("99:short", listener);
        ReleaseNotice.deliver("\u0661:x", listener); // a non-ASCII digit is not a length
        assertThat(heard).containsExactly("all of [nightly]", "all of [a:b]", "all of [99:short]", "all of [\u0661:x]");
    }
}
