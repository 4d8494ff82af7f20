package dev.baton.checker;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations on the command line: {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}. */
final class Durations {
    private static final Pattern FORM = Pattern.compile("(\\d+)(ms|s|m|h)");

    private Durations() {
    }

    /** @throws IllegalArgumentException naming the option and the accepted forms */
    static Duration parse(String option, String text) {
        Matcher m = FORM.matcher(text == null ? "" : text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(option + ": '" + text + "' is not a duration; use e.g. 500ms, 10s, 2m, 1h");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
    }
}
