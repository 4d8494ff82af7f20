package dev.baton.spi;

import dev.baton.LockClient;
import dev.baton.internal.CoreLockClient;

/** How a backend's builder turns its {@link LockBackend} into the {@link LockClient} users program against. */
public final class LockClients {
    private LockClients() {
    }

    /**
     * A client running the core (reentrancy, waiting, renewal, lost-lease detection) over the backend. The
     * client owns the backend and closes it when closed.
     */
    public static LockClient create(LockBackend backend, ClientSettings settings) {
        return new CoreLockClient(backend, settings);
    }
}
