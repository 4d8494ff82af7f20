/**
 * Baton's in-memory backend for unit tests: {@code InMemoryLockServer} and {@code InMemoryLocks} in
 * {@code dev.baton.memory}, the one exported package.
 */
module dev.baton.memory {
    requires transitive dev.baton.core;

    exports dev.baton.memory;
}
