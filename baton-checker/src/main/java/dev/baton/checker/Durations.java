package dev.baton.checker;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as written on the command line, the one syntax of every {@code baton} command ({@code run},
 * {@code purge}, {@code check} …): a non-negative whole number followed by {@code ms}, {@code s},
 * {@code m} or {@code h} ({@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}), or a bare number of seconds
 * with at most three decimals ({@code 10}, {@code 0.5}, {@code 0}), as flock and timeout accept. Anything else
 * (another unit, a sign, spaces, more than {@link #MAX}) is refused with a message naming what was written and
 * what is accepted. Each option bounds its own value further ({@link #requireAtMost}).
 */
public final class Durations {
    /** The longest duration written anywhere: {@value #MAX_HOURS}h, so nanoseconds never overflow. */
    public static final long MAX_HOURS = 2_562_047;
    /** {@value #MAX_HOURS} hours. */
    public static final Duration MAX = Duration.ofHours(MAX_HOURS);
    private static final Pattern FORM = Pattern.compile("(\\d{1,18})(ms|s|m|h)");
    private static final Pattern SECONDS = Pattern.compile("(\\d{1,18})(?:\\.(\\d{1,3}))?");
    private static final String FORMS = "like 500ms, 10s, 2m, 1h, or a number of seconds such as 10 or 0.5";

    private Durations() {
    }

    /**
     * Parses a duration.
     *
     * @throws IllegalArgumentException naming the text and the accepted forms
     */
    public static Duration parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("a duration is required (" + FORMS + ")");
        }
        Duration d;
        Matcher seconds = SECONDS.matcher(text);
        Matcher m = FORM.matcher(text);
        try {
            if (seconds.matches()) {
                String fraction = seconds.group(2) == null ? "" : seconds.group(2);
                d = Duration.ofSeconds(Long.parseLong(seconds.group(1)))
                        .plusMillis(fraction.isEmpty() ? 0 : Long.parseLong((fraction + "00").substring(0, 3)));
            } else if (m.matches()) {
                long amount = Long.parseLong(m.group(1));
                d = switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(amount);
                    case "s" -> Duration.ofSeconds(amount);
                    case "m" -> Duration.ofMinutes(amount);
                    case "h" -> Duration.ofHours(amount);
                    default -> throw new AssertionError(m.group(2));
                };
            } else {
                throw new IllegalArgumentException("'" + text + "' is not a duration: write a whole number and a"
                        + " unit (ms, s, m or h) or a number of seconds, " + FORMS);
            }
        } catch (ArithmeticException e) {
            d = null;
        }
        if (d == null || d.compareTo(MAX) > 0) {
            throw new IllegalArgumentException("'" + text + "' is too long a duration (at most " + MAX_HOURS + "h)");
        }
        return d;
    }

    /**
     * Parses an option's duration, the message prefixed by the option's name ({@code --lease: '5x' is not …}).
     *
     * @throws IllegalArgumentException naming the option, the text and the accepted forms
     */
    public static Duration parse(String option, String text) {
        try {
            return parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
        }
    }

    /**
     * Checks an option's upper bound.
     *
     * @param option the option's name, such as {@code --lease}
     * @param why    what the bound protects, for the message
     * @throws IllegalArgumentException naming the option, the bound, the value and the reason
     */
    public static void requireAtMost(String option, Duration value, Duration max, String why) {
        if (value != null && value.compareTo(max) > 0) {
            throw new IllegalArgumentException(option + " must be at most " + format(max) + " (" + why + "), was "
                    + format(value));
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
