package dev.baton.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as written on the command line: a non-negative whole number followed by {@code ms}, {@code s},
 * {@code m} or {@code h} ({@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}), or a bare {@code 0}. Anything
 * else (another unit, a sign, a fraction, spaces, a value too large for a {@link Duration}) is refused with
 * a message naming what was written and what is accepted.
 */
public final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d{1,18})(ms|s|m|h)");

    private Durations() {
    }

    /**
     * Parses a duration.
     *
     * @throws IllegalArgumentException naming the text and the accepted forms
     */
    public static Duration parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("a duration is required (like 500ms, 10s, 2m, 1h or 0)");
        }
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = FORM.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration: write a whole number and a unit"
                    + " (ms, s, m or h), like 500ms, 10s, 2m, 1h, or 0");
        }
        long amount = Long.parseLong(m.group(1));
        try {
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> throw new AssertionError(m.group(2));
            };
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("'" + text + "' is too long a duration", e);
        }
    }

    /** Formats a duration the way {@link #parse} reads it, in the largest unit that is exact. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) {
            return "0";
        }
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }

    /** The picocli converter for duration options. */
    public static final class Converter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
