package dev.baton.redis;

import dev.baton.spi.LockMode;

/**
 * A place this client keeps on the server for a waiter: in the line of an exclusive lock ({@link LockMode#EXCLUSIVE}),
 * or a waiting writer's claim ({@link LockMode#WRITE}); by lock, mode and the waiter's owner id. Also the key of an
 * acquire's pending clean-up ({@link Cleanups}).
 */
record Place(String name, LockMode mode, String owner) {
}
