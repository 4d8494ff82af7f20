package dev.baton.spi;

/** What kind of hold a request or grant is. */
public enum LockMode {
    /** A plain lock: one holder at a time. */
    EXCLUSIVE,
    /** The read side of a read-write lock: any number of readers while no writer holds it. */
    READ,
    /** The write side of a read-write lock: one writer, and no readers. */
    WRITE
}
