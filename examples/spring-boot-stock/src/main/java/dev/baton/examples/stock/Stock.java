package dev.baton.examples.stock;

import dev.baton.spring.boot.CurrentLease;
import dev.baton.spring.boot.WithLock;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

import java.util.Optional;

/** The stock counter: one lock per item, and the item's row keeps the highest fencing token that wrote it. */
@Service
public class Stock {
    private final JdbcClient db;

    public Stock(JdbcClient db) {
        this.db = db;
    }

    /** A write refused because a holder with a newer token wrote the item since this lease was granted. */
    public static final class StaleLeaseException extends RuntimeException {
        StaleLeaseException(String item, long token) {
            super("the stock of '" + item + "' was written under a newer lock than token " + token
                    + ": this holder's lease was lost; nothing was taken");
        }
    }

    /**
     * Takes one item: reads the count, then writes it less one — a read-modify-write that only the lock makes safe
     * across instances. The write carries the lease's fencing token and the database refuses it if a newer token
     * wrote the row already (a holder that paused past its lease and woke up late).
     *
     * @return the count left, or empty if the item is sold out
     * @throws StaleLeaseException if a newer holder wrote the item since this lease was granted
     */
    @WithLock(value = "stock-#{#item}", maxWait = "10s")
    public Optional<Integer> take(String item) {
        long token = CurrentLease.get().fencingToken();
        int left = db.sql("SELECT amount FROM baton_example_stock WHERE item = ?").param(item)
                .query(Integer.class).optional()
                .orElseThrow(() -> new IllegalArgumentException("no item '" + item + "'"));
        if (left == 0) {
            return Optional.empty();
        }
        int written = db.sql("UPDATE baton_example_stock SET amount = ?, fence = ? WHERE item = ? AND fence <= ?")
                .params(left - 1, token, item, token).update();
        if (written == 0) {
            throw new StaleLeaseException(item, token);
        }
        return Optional.of(left - 1);
    }
}
