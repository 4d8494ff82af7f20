package dev.baton.jdbc.optimistic;

import dev.baton.jdbc.Dialect;

/**
 * The SQL of {@link OptimisticStrategy} that differs per dialect family: creating a missing version row. (The
 * read and the compare-and-set are standard SQL, in the strategy.) Chosen once per client by {@link #of}.
 */
abstract class OptimisticStatements {
    final String table;

    OptimisticStatements(String table) {
        this.table = table;
    }

    /** The statement set of a dialect: the one place the optimistic strategy looks at it. */
    static OptimisticStatements of(Dialect dialect, String table) {
        return switch (dialect) {
            case POSTGRESQL -> new Postgres(table);
            case MARIADB, MYSQL -> new MySql(table);
            case SQLITE -> new Sqlite(table);
        };
    }

    /** Creates the row of a name at version 1 unless it exists (parameter: name). */
    abstract String insertIfMissing();

    /** PostgreSQL: {@code ON CONFLICT DO NOTHING}. */
    static final class Postgres extends OptimisticStatements {
        Postgres(String table) {
            super(table);
        }

        @Override
        String insertIfMissing() {
            return "INSERT INTO " + table + " (name, version) VALUES (?, 1) ON CONFLICT (name) DO NOTHING";
        }
    }

    /** MariaDB and MySQL: {@code INSERT IGNORE}. */
    static final class MySql extends OptimisticStatements {
        MySql(String table) {
            super(table);
        }

        @Override
        String insertIfMissing() {
            return "INSERT IGNORE INTO " + table + " (name, version) VALUES (?, 1)";
        }
    }

    /** SQLite: {@code INSERT OR IGNORE}. */
    static final class Sqlite extends OptimisticStatements {
        Sqlite(String table) {
            super(table);
        }

        @Override
        String insertIfMissing() {
            return "INSERT OR IGNORE INTO " + table + " (name, version) VALUES (?, 1)";
        }
    }
}
