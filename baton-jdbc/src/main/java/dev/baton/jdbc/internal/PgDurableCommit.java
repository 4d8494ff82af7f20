package dev.baton.jdbc.internal;

/**
 * PostgreSQL: a statement that makes its own transaction's commit wait for the WAL flush, whatever the server's,
 * database's, role's or connection's {@code synchronous_commit} default ({@code off} is a common tuning). A grant,
 * a renewal or a token draw lost in a server crash could let a second client hold while the first still believes
 * it does, or hand out a fencing token again; each of them carries one of these, so its commit is acknowledged only
 * once it is flushed. {@code set_config(…, true)} lasts until the end of the transaction: in auto-commit mode that is
 * the statement's own; in a transaction the caller opened, that whole transaction commits flushed.
 */
public final class PgDurableCommit {
    private PgDurableCommit() {
    }

    /** The call, for a select list: {@code set_config('synchronous_commit', 'on', true)}. */
    public static final String CALL = "set_config('synchronous_commit', 'on', true)";

    /**
     * A one-row {@code FROM} item ({@code durable}) that makes the call: a {@code FROM} item is always evaluated,
     * unlike a CTE that nothing references.
     */
    public static final String FROM_ITEM = "(SELECT " + CALL + ") AS durable";
}
