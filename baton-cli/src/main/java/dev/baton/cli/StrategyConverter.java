package dev.baton.cli;

import dev.baton.jdbc.Strategy;
import picocli.CommandLine;

import java.util.Locale;

/** {@code lease} or {@code session}, case-insensitive; anything else is a usage error naming both. */
final class StrategyConverter implements CommandLine.ITypeConverter<Strategy> {
    @Override
    public Strategy convert(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "lease" -> Strategy.LEASE;
            case "session" -> Strategy.SESSION;
            default -> throw new CommandLine.TypeConversionException("'" + value
                    + "' is not a strategy: use lease or session");
        };
    }
}
