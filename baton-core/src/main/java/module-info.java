/**
 * Baton's API ({@code dev.baton}: {@code LockClient}, {@code DistributedLock}, {@code Lease}, the exceptions) and
 * the backend SPI ({@code dev.baton.spi}). The core that runs every backend ({@code dev.baton.internal}) is not
 * exported: backends reach it through {@link dev.baton.spi.LockClients}.
 */
module dev.baton.core {
    requires transitive org.slf4j;

    exports dev.baton;
    exports dev.baton.spi;
}
