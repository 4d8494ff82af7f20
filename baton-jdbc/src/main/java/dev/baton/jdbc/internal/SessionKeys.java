package dev.baton.jdbc.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The server-side keys of the session strategy's locks in one table. PostgreSQL's 64-bit key is the first 8
 * bytes of SHA-256 over {@code table + U+0000 + name} (big-endian, signed); MySQL's lock name is
 * {@code "baton:"} plus the unpadded base64url SHA-256 of the same bytes (49 characters, within MySQL's 64).
 * Read-write locks (PostgreSQL) take the key of {@code U+0000 "rw" U+0000 + name}: a namespace apart.
 */
public final class SessionKeys {
    private final String table;

    /** The keys of lock table {@code table}. */
    public SessionKeys(String table) {
        this.table = table;
    }

    private byte[] digest(String name) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(table.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
            md.update(name.getBytes(StandardCharsets.UTF_8));
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** PostgreSQL's advisory key of a name. */
    public long pgKey(String name) {
        return ByteBuffer.wrap(digest(name)).getLong();
    }

    /** MySQL's named-lock name of a lock name. */
    public String myKey(String name) {
        return "baton:" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest(name));
    }

    /**
     * MariaDB's and MySQL's named lock that the lease strategy's holder of a contended lock keeps while it holds it,
     * for the head of the line to wait on ({@code "baton-bell:"} plus the base64url SHA-256 of
     * {@code table + U+0000 + U+0000 "bell" U+0000 + name}: 54 characters, a namespace apart from {@link #myKey}).
     */
    public String myBellKey(String name) {
        return "baton-bell:" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest("\u0000bell\u0000" + name));
    }

    /**
     * The named lock that a waiter of the lease strategy keeps while it has a place in the line of {@code name}, for
     * the waiter behind it to wait on: one per place, named by the waiter and the time its place was taken
     * ({@code since}, microseconds by the database clock), so that a waiter that leaves the line and comes back keeps
     * a new bell, not the one a waiter behind its old place waits on (as {@link #myBellKey}, over
     * {@code U+0000 "ticket" U+0000 + owner + U+0000 + since + U+0000 + name}).
     */
    public String myTicketBellKey(String name, String owner, long since) {
        return "baton-bell:" + Base64.getUrlEncoder().withoutPadding().encodeToString(
                digest("\u0000ticket\u0000" + owner + "\u0000" + since + "\u0000" + name));
    }

    /** PostgreSQL's advisory key of a read-write lock: a namespace apart from plain locks. */
    public long pgRwKey(String name) {
        return pgKey("\u0000rw\u0000" + name);
    }
}
