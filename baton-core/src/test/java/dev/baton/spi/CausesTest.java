package dev.baton.spi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;

import static org.assertj.core.api.Assertions.assertThat;

class CausesTest {
    @Test
    void theChainStartsWithTheExceptionAndFollowsEachCause() {
        ConnectException root = new ConnectException("refused");
        IOException middle = new IOException("io", root);
        RuntimeException top = new RuntimeException("top", middle);

        assertThat(Causes.chain(top)).containsExactly(top, middle, root);
        assertThat(Causes.root(top)).isSameAs(root);
        assertThat(Causes.find(top, IOException.class)).containsSame(middle);
        assertThat(Causes.find(top, ConnectException.class)).containsSame(root);
        assertThat(Causes.find(top, InterruptedException.class)).isEmpty();
        assertThat(Causes.any(top, t -> "refused".equals(t.getMessage()))).isTrue();
        assertThat(Causes.any(top, t -> "nowhere".equals(t.getMessage()))).isFalse();
    }

    @Test
    void aChainThatLoopsBackEndsBeforeTheRepeat() {
        IOException a = new IOException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b); // a -> b -> a -> …

        assertThat(Causes.chain(a)).containsExactly(a, b);
        assertThat(Causes.root(a)).isSameAs(b);
        assertThat(Causes.find(a, InterruptedException.class)).isEmpty();
    }

    @Test
    void noExceptionHasNoChain() {
        assertThat(Causes.chain(null)).isEmpty();
        assertThat(Causes.root(null)).isNull();
        assertThat(Causes.any(null, t -> true)).isFalse();
        assertThat(Causes.find(null, Throwable.class)).isEmpty();
    }
}
