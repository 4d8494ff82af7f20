package dev.baton;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LockNamesTest {
    @Test
    void acceptsAnyUnicodeUpToTheLimit() {
        assertThat(LockNames.validate("a")).isEqualTo("a");
        assertThat(LockNames.validate("'; DROP TABLE x; --%_")).isNotNull();
        String emoji = "\uD83D\uDD12".repeat(LockNames.MAX_LENGTH); // 512 code points, 1024 chars
        assertThat(LockNames.validate(emoji)).isEqualTo(emoji);
    }

    @Test
    void rejectsWithSpecificMessages() {
        assertThatThrownBy(() -> LockNames.validate(null)).hasMessage("lock name must not be null");
        assertThatThrownBy(() -> LockNames.validate("")).hasMessage("lock name must not be empty");
        assertThatThrownBy(() -> LockNames.validate("z".repeat(513))).hasMessageContaining("513 code points");
        assertThatThrownBy(() -> LockNames.validate("a\u0000b")).hasMessageContaining("U+0000 (at index 1)");
        assertThatThrownBy(() -> LockNames.validate("\uDC00x")).hasMessageContaining("unpaired surrogate at index 0");
        assertThatThrownBy(() -> LockNames.validate("x\uD83D")).hasMessageContaining("unpaired surrogate at index 1");
    }
}
