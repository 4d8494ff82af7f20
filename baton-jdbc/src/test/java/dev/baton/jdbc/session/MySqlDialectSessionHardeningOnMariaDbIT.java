package dev.baton.jdbc.session;

import dev.baton.jdbc.Dialect;

/** {@link SessionHardeningTests} with the MySQL dialect on MariaDB (counter-row tokens, GET_LOCK without NEXTVAL). */
class MySqlDialectSessionHardeningOnMariaDbIT extends MariaDbSessionHardeningIT {
    @Override
    Dialect dialect() {
        return Dialect.MYSQL;
    }

    @Override
    Dialect forcedDialect() {
        return Dialect.MYSQL;
    }
}
