package dev.baton.jdbc.internal;

import dev.baton.MissingSchemaException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The shipped DDL resources ({@code /dev/baton/jdbc/schema/*.sql}), read as statements for a table name. */
public final class Ddl {
    private Ddl() {
    }

    /**
     * The statements of a shipped DDL resource, with {@code baton_locks} replaced by {@code table}.
     *
     * @throws MissingSchemaException if the resource is missing from the jar or unreadable
     */
    public static List<String> statements(String resource, String table) {
        String text;
        try (InputStream in = Ddl.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new MissingSchemaException("DDL resource " + resource + " is missing from the jar");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new MissingSchemaException("cannot read " + resource, e);
        }
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : text.split("\n")) {
            String trimmed = line.strip();
            if (trimmed.startsWith("--") || trimmed.isEmpty()) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                String sql = current.toString().strip();
                statements.add(sql.substring(0, sql.length() - 1).replace("baton_locks", table));
                current.setLength(0);
            }
        }
        return statements;
    }
}
