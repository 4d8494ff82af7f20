package dev.baton.redis;

import dev.baton.ForcedRelease;
import dev.baton.LockInfo;
import dev.baton.spi.LeaseKey;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The operator's view and levers ({@code baton list}, {@code release}): every lock under the prefix with its holder
 * and its line, a forced release of exactly the grant read, and the removal of a place in a line. The levers use the
 * holder's and the waiter's own scripts, so they never end a grant or a place other than the one they read.
 */
final class Inspection {
    /** The backend's logger: one category for every part of it. */
    private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

    private final Calls calls;
    private final HeldGrants held;
    private final String prefix;

    Inspection(Calls calls, HeldGrants held, String prefix) {
        this.calls = calls;
        this.held = held;
        this.prefix = prefix;
    }

    /**
     * Reads the live exclusive grant of {@code name} and releases exactly that grant (owner and token) with the
     * holder's own release script, so a grant made in between is never ended; if it changed in between, looks again
     * (at most three times).
     */
    Optional<ForcedRelease> forceRelease(String name, OptionalLong token) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, name);
        String what = "force release of '" + name + "'";
        for (int attempt = 0; attempt < 3; attempt++) {
            String v;
            long pttl;
            try {
                v = calls.commands().get(k.exclusive());
                pttl = v == null ? -2 : calls.commands().pttl(k.exclusive());
            } catch (RedisException e) {
                throw calls.failed(what, e);
            }
            String[] parts = v == null ? new String[0] : v.split("\\|", 3);
            if (parts.length < 3 || !parts[0].matches("\\d{1,18}") || pttl == -2) {
                return Optional.empty();
            }
            long live = Long.parseLong(parts[0]);
            if (token.isPresent() && live != token.getAsLong()) {
                return Optional.empty();
            }
            if (held.release(new LeaseKey(name, parts[2], live))) {
                return Optional.of(new ForcedRelease(name, parts[2], live, Duration.ofMillis(Math.max(0, pttl))));
            }
        }
        return Optional.empty();
    }

    /**
     * Removes {@code owner}'s place in the line of the exclusive lock {@code name} with the waiter's own withdrawal
     * script (expired places first; the next head is woken if the place was the head), after reading it (arrival
     * and expiry) for the answer.
     */
    Optional<LockInfo.Waiter> removeFromLine(String name, String owner) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, name);
        String what = "removal of " + owner + "'s place in the line of '" + name + "'";
        try {
            Double arrivalUs = calls.commands().zscore(k.line(), owner);
            Double expiryMs = calls.commands().zscore(k.lineExpiry(), owner);
            Long removed = calls.run(Scripts.WITHDRAW, ScriptOutputType.INTEGER, what,
                    new String[] {k.line(), k.lineExpiry()}, owner, k.channel(), name);
            if (removed == null || removed != 1L || arrivalUs == null) {
                return Optional.empty();
            }
            long us = arrivalUs.longValue();
            return Optional.of(new LockInfo.Waiter(owner,
                    Instant.ofEpochSecond(us / 1_000_000, (us % 1_000_000) * 1000),
                    expiryMs == null ? null : Instant.ofEpochMilli(expiryMs.longValue())));
        } catch (RedisException e) {
            throw calls.failed(what, e);
        }
    }

    /**
     * Every exclusive and write grant under the prefix, and every exclusive lock with a line: held ones with their
     * line (in order, expired places dropped first by {@link Scripts#LINE}), free ones kept for a waiter with
     * {@code held} false, the last token (from the counter) and their line. Writers' claims are not shown.
     */
    List<LockInfo> inspect() {
        Commands commands = calls.commands();
        List<LockInfo> out = new ArrayList<>();
        try {
            List<String> time = commands.time();
            long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
            ScanArgs args = ScanArgs.Builder.matches(prefix + "{*}:[xwq]").limit(500);
            ScanCursor cursor = ScanCursor.INITIAL;
            record Grant(LockInfo info, boolean exclusive) {
            }
            List<Grant> grants = new ArrayList<>();
            Set<String> withLine = new LinkedHashSet<>();
            do {
                KeyScanCursor<String> page = commands.scan(cursor, args);
                for (String key : page.getKeys()) {
                    String name = RedisKeys.nameOf(prefix, key);
                    if (name != null && key.endsWith(":q")) {
                        withLine.add(name);
                        continue;
                    }
                    String v = name == null ? null : commands.get(key);
                    if (v == null) {
                        continue;
                    }
                    long pttl = commands.pttl(key);
                    String[] parts = v.split("\\|", 3);
                    if (parts.length < 3 || !parts[0].matches("\\d{1,18}") || !parts[1].matches("\\d{1,18}")) {
                        log.debug("skipping key {}: not a Baton grant ({})", key, v);
                        continue;
                    }
                    grants.add(new Grant(new LockInfo(name, parts[2], Long.parseLong(parts[0]),
                            Instant.ofEpochMilli(Long.parseLong(parts[1])),
                            pttl >= 0 ? Instant.ofEpochMilli(nowMs + pttl) : null, pttl != -2), key.endsWith(":x")));
                }
                cursor = page;
            } while (!cursor.isFinished());
            Set<String> exclusiveHeld = new HashSet<>();
            for (Grant grant : grants) {
                LockInfo g = grant.info();
                List<LockInfo.Waiter> line = grant.exclusive() && withLine.contains(g.name()) ? line(g.name())
                        : List.of();
                if (grant.exclusive()) {
                    exclusiveHeld.add(g.name());
                }
                out.add(new LockInfo(g.name(), g.holder(), g.fencingToken(), g.acquiredAt(), g.expiresAt(), g.held(),
                        line));
            }
            for (String name : withLine) {
                if (exclusiveHeld.contains(name)) {
                    continue;
                }
                List<LockInfo.Waiter> line = line(name);
                if (line.isEmpty()) {
                    continue;
                }
                String counter = commands.get(RedisKeys.Lock.of(prefix, name).counter());
                long token = counter != null && counter.matches("\\d{1,18}") ? Long.parseLong(counter) : -1;
                out.add(new LockInfo(name, null, token, null, null, false, line));
            }
        } catch (RedisException e) {
            throw calls.failed("listing the locks under " + prefix, e);
        }
        return out;
    }

    /** The line of {@code name}, in order, after {@link Scripts#LINE} dropped its expired places. */
    private List<LockInfo.Waiter> line(String name) {
        RedisKeys.Lock k = RedisKeys.Lock.of(prefix, name);
        List<Object> r = calls.run(Scripts.LINE, ScriptOutputType.MULTI, "reading the line of '" + name + "'",
                new String[] {k.line(), k.lineExpiry()});
        List<LockInfo.Waiter> line = new ArrayList<>();
        for (int i = 1; i + 2 < r.size(); i += 3) {
            long arrivalUs = (long) Double.parseDouble((String) r.get(i + 1));
            long expiryMs = (long) Double.parseDouble((String) r.get(i + 2));
            line.add(new LockInfo.Waiter((String) r.get(i),
                    Instant.ofEpochSecond(arrivalUs / 1_000_000, (arrivalUs % 1_000_000) * 1000),
                    Instant.ofEpochMilli(expiryMs)));
        }
        return line;
    }
}
