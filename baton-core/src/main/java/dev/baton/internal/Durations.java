package dev.baton.internal;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as written on the command line, the one syntax of every {@code baton} command ({@code run},
 * {@code purge}, {@code check} …), kept here so that the CLI and the checker read them alike (not part of the
 * library's API): a non-negative number followed by {@code ms}, {@code s}, {@code m} or {@code h}
 * ({@code 500ms}, {@code 10s}, {@code 1.5s}, {@code 2m}, {@code 1h}), several of them from the largest unit down,
 * each unit once ({@code 1h30m}, {@code 2m30s}, {@code 1s500ms}), or a bare number of seconds with at most three
 * decimals ({@code 10}, {@code 0.5}, {@code 0}), as flock and timeout accept. A number has at most three
 * decimals and the whole is a whole number of milliseconds. Anything else (another unit, a sign, spaces, more
 * than {@link #MAX}) is refused with a message naming what was written and what is accepted. Each option
 * bounds its own value further ({@link #requireAtMost}).
 */
public final class Durations {
    /** The longest duration written anywhere: {@value #MAX_HOURS}h, so nanoseconds never overflow. */
    public static final long MAX_HOURS = 2_562_047;
    /** {@value #MAX_HOURS} hours. */
    public static final Duration MAX = Duration.ofHours(MAX_HOURS);
    private static final Pattern PART = Pattern.compile("(\\d{1,18})(?:\\.(\\d{1,3}))?(ms|s|m|h)");
    private static final Pattern SECONDS = Pattern.compile("(\\d{1,18})(?:\\.(\\d{1,3}))?");
    /** The units, largest first, and their length in milliseconds. */
    private static final List<String> UNITS = List.of("h", "m", "s", "ms");
    private static final long[] UNIT_MILLIS = {3_600_000, 60_000, 1000, 1};
    private static final String FORMS = "like 500ms, 10s, 1.5s, 2m, 1h30m, or a number of seconds such as 10 or"
            + " 0.5";

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
        BigDecimal millis;
        Matcher seconds = SECONDS.matcher(text);
        if (seconds.matches()) {
            millis = number(seconds.group(1), seconds.group(2)).multiply(BigDecimal.valueOf(1000));
        } else {
            millis = compound(text);
        }
        if (millis.stripTrailingZeros().scale() > 0) {
            throw new IllegalArgumentException("'" + text + "' is not a whole number of milliseconds (" + FORMS
                    + ")");
        }
        if (millis.compareTo(BigDecimal.valueOf(MAX.toMillis())) > 0) {
            throw new IllegalArgumentException("'" + text + "' is too long a duration (at most " + MAX_HOURS + "h)");
        }
        return Duration.ofMillis(millis.longValueExact());
    }

    /** {@code 1h30m}: parts with units from the largest down, each once; their sum in milliseconds. */
    private static BigDecimal compound(String text) {
        Matcher m = PART.matcher(text);
        BigDecimal total = BigDecimal.ZERO;
        int position = 0;
        int nextUnit = 0;
        while (position < text.length()) {
            m.region(position, text.length());
            if (!m.lookingAt()) {
                throw new IllegalArgumentException("'" + text + "' is not a duration: write a number and a unit"
                        + " (ms, s, m or h), several from the largest unit down, or a number of seconds, " + FORMS);
            }
            int unit = UNITS.indexOf(m.group(3));
            if (unit < nextUnit) {
                throw new IllegalArgumentException("'" + text + "' is not a duration: write each unit once, from"
                        + " the largest down (h, m, s, ms), " + FORMS);
            }
            nextUnit = unit + 1;
            total = total.add(number(m.group(1), m.group(2)).multiply(BigDecimal.valueOf(UNIT_MILLIS[unit])));
            position = m.end();
        }
        if (position == 0) {
            throw new IllegalArgumentException("'" + text + "' is not a duration: write a number and a unit"
                    + " (ms, s, m or h), several from the largest unit down, or a number of seconds, " + FORMS);
        }
        return total;
    }

    private static BigDecimal number(String whole, String fraction) {
        return new BigDecimal(fraction == null ? whole : whole + "." + fraction);
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
}
