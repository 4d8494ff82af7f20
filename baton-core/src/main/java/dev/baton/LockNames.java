package dev.baton;

/**
 * The rules every lock name follows, checked once in the core for every backend: not null, not empty, at
 * most {@value #MAX_LENGTH} Unicode code points, no U+0000 (PostgreSQL text cannot hold it) and no unpaired
 * surrogate (it has no UTF-8 form). Anything else is allowed: quotes, {@code %}, {@code _}, emoji, spaces.
 * Names are compared exactly (case, accents and trailing spaces matter).
 */
public final class LockNames {
    /** The longest name, in Unicode code points. */
    public static final int MAX_LENGTH = 512;

    private LockNames() {
    }

    /**
     * Returns the name if valid.
     *
     * @throws IllegalArgumentException naming what is wrong with it
     */
    public static String validate(String name) {
        if (name == null) {
            throw new IllegalArgumentException("lock name must not be null");
        }
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name must not be empty");
        }
        int codePoints = name.codePointCount(0, name.length());
        if (codePoints > MAX_LENGTH) {
            throw new IllegalArgumentException("lock name is " + codePoints + " code points long; the maximum is "
                    + MAX_LENGTH + " (name starts with '" + name.substring(0, 40) + "…')");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '\u0000') {
                throw new IllegalArgumentException("lock name must not contain U+0000 (at index " + i + ")");
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("lock name contains an unpaired surrogate at index " + i);
            }
            if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException("lock name contains an unpaired surrogate at index " + i);
            }
        }
        return name;
    }
}
