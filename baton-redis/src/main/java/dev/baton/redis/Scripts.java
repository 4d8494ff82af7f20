package dev.baton.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Baton's Lua scripts. Each runs atomically on the server and touches only the keys of one lock (one hash tag,
 * so one slot), except {@link #RENEW}, which is sent once per slot. Every time inside a script is the server's
 * ({@code TIME}); no script takes a client timestamp.
 *
 * <p>Values: an exclusive or write grant is the string {@code <token>|<granted ms>|<owner>} with a {@code PX}
 * expiry; a read grant is the member {@code <token>|<owner>} of the readers' sorted set, scored by its expiry (ms).
 * A waiter's place is the member {@code <owner>} of the line (scored by arrival, in µs) and of its expiry set
 * (scored by when the place expires, in ms); a waiting writer's claim is the member {@code <owner>} of the writers'
 * claims, scored by when it expires. A place or claim lives {@link RedisLockBackend#PLACE_TTL} after its client's
 * last heartbeat ({@link #KEEP_PLACES}) or attempt, whatever the waiter's lease; every script that reads the line or
 * the claims first removes the expired ones.
 */
final class Scripts {
    private Scripts() {
    }

    /** One script: its text and SHA-1, for {@code EVALSHA} with an {@code EVAL} fallback on {@code NOSCRIPT}. */
    record Script(String name, String body, String sha) {
        static Script of(String name, String body) {
            String text = COMMON + body;
            try {
                byte[] d = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
                return new Script(name, text, HexFormat.of().formatHex(d));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Shared helpers: the server's now in ms, the next token, purging expired places and readers. */
    private static final String COMMON = """
            -- a number as digits: Lua's own conversion keeps 14 significant digits (1.7954744187483e+15)
            local function num(n)
              return string.format('%.0f', n)
            end
            local function now_ms()
              local t = redis.call('TIME')
              return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            end
            local function now_us()
              local t = redis.call('TIME')
              return tonumber(t[1]) * 1000000 + tonumber(t[2])
            end
            -- the next token of a lock: the largest of the counter + 1, the server's clock in µs and the highest
            -- token the caller saw for the lock (floor) + 1. So it is above every earlier token of the lock if the
            -- counter survived, or if the server's clock is past every earlier grant's microsecond, or if the
            -- caller saw the highest earlier token. The counter is written back with an expiry of ttl ms, renewed
            -- at each grant: a counter lost after ttl ms without a grant is safe to lose, since the clock has then
            -- moved ttl ms past every token it gave (unless it was stepped back by more than that). Returns the
            -- token and 1 if only the floor kept it above the caller's earlier token (the counter was lost or set
            -- back, and the clock is behind: the caller reports it).
            local function next_token(counter, floor, ttl)
              local c = tonumber(redis.call('GET', counter) or '0') or 0
              local t = math.max(c + 1, now_us())
              local raised = 0
              if t <= floor then
                t = floor + 1
                raised = 1
              end
              redis.call('SET', counter, num(t), 'PX', ttl)
              return t, raised
            end
            local function purge_zset(key, now)
              redis.call('ZREMRANGEBYSCORE', key, '-inf', num(now))
            end
            local function purge_line(line, expiry, now)
              local dead = redis.call('ZRANGEBYSCORE', expiry, '-inf', num(now))
              for i = 1, #dead do
                redis.call('ZREM', line, dead[i])
                redis.call('ZREM', expiry, dead[i])
              end
            end
            local function keep_at_least(key, ms)
              if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
            end
            local function parse(v)
              return string.match(v, '^(%d+)|(%d+)|(.*)$')
            end
            """;

    /**
     * Exclusive acquire. KEYS: lock, counter, line, line expiry. ARGV: owner, lease ms, wait (1 or 0), the
     * highest token the caller saw for the lock (0 if none), counter expiry ms, place expiry ms. A free lock goes
     * to the head of the line (or to anyone when nobody waits): {@code SET lock value NX PX lease} with the next
     * token (see {@code next_token}). Otherwise a waiting caller keeps (or takes) its place at the back, which
     * expires one place expiry after this attempt unless a heartbeat ({@link #KEEP_PLACES}) renews it. Returns
     * {1, token, raised (1 if only the caller's floor kept the token above its earlier ones)} or {0, holder, holder
     * token, ms left} (a free lock promised to the head of the line: holder '' and the ms until the head's place
     * expires).
     */
    static final Script ACQUIRE = Script.of("acquire", """
            local now = now_ms()
            local lease = tonumber(ARGV[2])
            purge_line(KEYS[3], KEYS[4], now)
            local cur = redis.call('GET', KEYS[1])
            if not cur then
              local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
              if head == nil or head == ARGV[1] then
                local token, raised = next_token(KEYS[2], tonumber(ARGV[4]), ARGV[5])
                redis.call('SET', KEYS[1], num(token) .. '|' .. num(now) .. '|' .. ARGV[1], 'NX', 'PX', lease)
                if head ~= nil then
                  redis.call('ZREM', KEYS[3], ARGV[1])
                  redis.call('ZREM', KEYS[4], ARGV[1])
                end
                return {1, token, raised}
              end
            end
            if ARGV[3] == '1' then
              local ttl = tonumber(ARGV[6])
              if not redis.call('ZSCORE', KEYS[3], ARGV[1]) then
                redis.call('ZADD', KEYS[3], num(now_us()), ARGV[1])
              end
              redis.call('ZADD', KEYS[4], num(now + ttl), ARGV[1])
              keep_at_least(KEYS[3], ttl)
              keep_at_least(KEYS[4], ttl)
            end
            if cur then
              local tok, at, owner = parse(cur)
              return {0, owner, tonumber(tok), redis.call('PTTL', KEYS[1])}
            end
            -- free, but promised to the head of the line: retry when its place would expire (within one place
            -- expiry, unless its client's heartbeat keeps it)
            local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
            local exp = redis.call('ZSCORE', KEYS[4], head)
            return {0, '', -1, exp and (tonumber(exp) - now) or -1}
            """);

    /**
     * Read acquire. KEYS: writer, readers, counter, writers' claims. ARGV: owner, lease ms, highest token seen,
     * counter expiry ms. Refused while a writer
     * holds the lock or one waits (its claim holds back new readers). Returns as {@link #ACQUIRE}.
     */
    static final Script ACQUIRE_READ = Script.of("acquire-read", """
            local now = now_ms()
            local lease = tonumber(ARGV[2])
            purge_zset(KEYS[2], now)
            purge_zset(KEYS[4], now)
            local w = redis.call('GET', KEYS[1])
            if w then
              local tok, at, owner = parse(w)
              return {0, owner, tonumber(tok), redis.call('PTTL', KEYS[1])}
            end
            local claim = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
            if claim[1] then
              return {0, '', -1, tonumber(claim[2]) - now}
            end
            local token, raised = next_token(KEYS[3], tonumber(ARGV[3]), ARGV[4])
            redis.call('ZADD', KEYS[2], num(now + lease), num(token) .. '|' .. ARGV[1])
            keep_at_least(KEYS[2], lease)
            return {1, token, raised}
            """);

    /**
     * Write acquire. KEYS: writer, readers, counter, writers' claims. ARGV: owner, lease ms, wait (1 or 0), highest
     * token seen, counter expiry ms, place expiry ms. Granted when no writer and no live reader; otherwise a waiting
     * writer claims the lock (holds back new readers) until one place expiry after this attempt, unless a heartbeat
     * ({@link #KEEP_PLACES}) renews the claim.
     */
    static final Script ACQUIRE_WRITE = Script.of("acquire-write", """
            local now = now_ms()
            local lease = tonumber(ARGV[2])
            purge_zset(KEYS[2], now)
            purge_zset(KEYS[4], now)
            local w = redis.call('GET', KEYS[1])
            local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
            if not w and not first[1] then
              local token, raised = next_token(KEYS[3], tonumber(ARGV[4]), ARGV[5])
              redis.call('SET', KEYS[1], num(token) .. '|' .. num(now) .. '|' .. ARGV[1], 'NX', 'PX', lease)
              redis.call('ZREM', KEYS[4], ARGV[1])
              return {1, token, raised}
            end
            if ARGV[3] == '1' then
              local ttl = tonumber(ARGV[6])
              redis.call('ZADD', KEYS[4], num(now + ttl), ARGV[1])
              keep_at_least(KEYS[4], ttl)
            end
            if w then
              local tok, at, owner = parse(w)
              return {0, owner, tonumber(tok), redis.call('PTTL', KEYS[1])}
            end
            local tok, owner = string.match(first[1], '^(%d+)|(.*)$')
            return {0, owner, tonumber(tok), tonumber(first[2]) - now}
            """);

    /**
     * Release of an exclusive or write grant: compare-and-delete on owner and token, then {@code PUBLISH} of the
     * lock's name on its channel. KEYS: lock, line, line expiry. ARGV: owner, token, channel, name, write (1 or 0).
     * Returns 1 if released. An exclusive release publishes only when the line is not empty: every waiter of an
     * exclusive lock took its place in the same script that found the lock busy, so an empty line means nobody to
     * wake (an uncontended lock costs no message); and the message names the head of the line after a NUL (which
     * no lock name contains), so only the head's client wakes its waiters. A write release always publishes the
     * bare name: held-back readers leave no trace.
     */
    static final Script RELEASE = Script.of("release", """
            local v = redis.call('GET', KEYS[1])
            if v then
              local tok, at, owner = parse(v)
              if tok == ARGV[2] and owner == ARGV[1] then
                redis.call('DEL', KEYS[1])
                if ARGV[5] == '1' then
                  redis.call('PUBLISH', ARGV[3], ARGV[4])
                else
                  purge_line(KEYS[2], KEYS[3], now_ms())
                  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
                  if head then redis.call('PUBLISH', ARGV[3], ARGV[4] .. '\\0' .. head) end
                end
                return 1
              end
            end
            return 0
            """);

    /** Release of a read grant. KEYS: readers. ARGV: member, channel, name. Returns 1 if a live grant was released. */
    static final Script RELEASE_READ = Script.of("release-read", """
            local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
            if not score then return 0 end
            redis.call('ZREM', KEYS[1], ARGV[1])
            if tonumber(score) <= now_ms() then return 0 end
            redis.call('PUBLISH', ARGV[2], ARGV[3])
            return 1
            """);

    /**
     * Renewal of every given grant in one call. KEYS: the grants' keys. ARGV: lease ms, then per key its kind
     * ({@code s} for a string grant, {@code z} for a reader) and {@code <token>|<owner>}. {@code PEXPIRE} only where
     * owner and token still match (and a reader has not expired). Returns, for each grant renewed, its 1-based index
     * and the ms it had left before the renewal by the server's clock ({@code PTTL}, or a reader's score less now;
     * a grant without an expiry reports the lease): the client checks that against its local deadline, so a server
     * clock that jumped forward, which ends every grant early, does not go unnoticed.
     */
    static final Script RENEW = Script.of("renew", """
            local now = now_ms()
            local lease = tonumber(ARGV[1])
            local renewed = {}
            for i = 1, #KEYS do
              local kind = ARGV[2 * i]
              local want = ARGV[2 * i + 1]
              if kind == 's' then
                local v = redis.call('GET', KEYS[i])
                if v then
                  local tok, at, owner = parse(v)
                  if tok .. '|' .. owner == want then
                    local left = redis.call('PTTL', KEYS[i])
                    if left < 0 then left = lease end
                    redis.call('PEXPIRE', KEYS[i], lease)
                    renewed[#renewed + 1] = i
                    renewed[#renewed + 1] = left
                  end
                end
              else
                local score = redis.call('ZSCORE', KEYS[i], want)
                if score and tonumber(score) > now then
                  redis.call('ZADD', KEYS[i], 'XX', num(now + lease), want)
                  keep_at_least(KEYS[i], lease)
                  renewed[#renewed + 1] = i
                  renewed[#renewed + 1] = tonumber(score) - now
                end
              end
            end
            return renewed
            """);

    /** Whether a grant is still held. KEYS: its key. ARGV: kind, {@code <token>|<owner>}. Returns 1 or 0. */
    static final Script CONFIRM = Script.of("confirm", """
            if ARGV[1] == 's' then
              local v = redis.call('GET', KEYS[1])
              if not v then return 0 end
              local tok, at, owner = parse(v)
              if tok .. '|' .. owner == ARGV[2] then return 1 end
              return 0
            end
            local score = redis.call('ZSCORE', KEYS[1], ARGV[2])
            if score and tonumber(score) > now_ms() then return 1 end
            return 0
            """);

    /**
     * Withdraws a waiter's place. KEYS: line, line expiry (for a writer: its claims twice). ARGV: owner, channel,
     * name. Expired places go first. When the place was the head of a line, the next live waiter may now go:
     * publish, naming it (a writer's withdrawal publishes the bare name: the readers it held back may go).
     */
    static final Script WITHDRAW = Script.of("withdraw", """
            if KEYS[1] == KEYS[2] then
              purge_zset(KEYS[1], now_ms())
            else
              purge_line(KEYS[1], KEYS[2], now_ms())
            end
            local head = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
            local removed = redis.call('ZREM', KEYS[1], ARGV[1])
            redis.call('ZREM', KEYS[2], ARGV[1])
            if removed == 1 and KEYS[1] == KEYS[2] then
              redis.call('PUBLISH', ARGV[2], ARGV[3])
            elseif removed == 1 and head == ARGV[1] then
              local next = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
              if next then redis.call('PUBLISH', ARGV[2], ARGV[3] .. '\\0' .. next) end
            end
            return removed
            """);

    /**
     * Cleans up after an acquire whose outcome is unknown (it timed out): deletes the grant only if this owner
     * holds it (any token), and its place in line, in the namespace of the acquire's own mode only: the clean-up
     * of {@code lock(name)} never touches {@code readWriteLock(name)}'s grants, and the reverse (the owner is the
     * client and the thread, so the same thread may hold both). KEYS: the grant's key (lock, writer or readers),
     * line, line expiry. ARGV: owner, channel, name, kind ({@code s}: a string grant, and its place in the line
     * or the writers' claims; {@code z}: this owner's members of the readers, which take no place). Returns how
     * many grants were removed.
     */
    static final Script ABANDON = Script.of("abandon", """
            local removed = 0
            if ARGV[4] == 's' then
              local v = redis.call('GET', KEYS[1])
              if v then
                local tok, at, owner = parse(v)
                if owner == ARGV[1] then
                  redis.call('DEL', KEYS[1])
                  removed = removed + 1
                end
              end
              redis.call('ZREM', KEYS[2], ARGV[1])
              redis.call('ZREM', KEYS[3], ARGV[1])
            else
              local members = redis.call('ZRANGE', KEYS[1], 0, -1)
              local suffix = '|' .. ARGV[1]
              for i = 1, #members do
                local m = members[i]
                local tok = string.match(m, '^(%d+)|')
                if tok and m == tok .. suffix then
                  redis.call('ZREM', KEYS[1], m)
                  removed = removed + 1
                end
              end
            end
            if removed > 0 then redis.call('PUBLISH', ARGV[2], ARGV[3]) end
            return removed
            """);

    /**
     * The heartbeat of every place in line and writer's claim one client keeps, in one call (a standalone Redis or a
     * Sentinel's primary is one slot space). KEYS: per place three keys: its line, the line's expiry set and the
     * lock's grant key (for a writer's claim: the writers' claims twice, then the write grant). ARGV: the place expiry
     * in ms, then per place its owner, the lock's channel and name. Per place: a place still in line (or a claim still
     * kept) now expires one place expiry from now, even one past its expiry that no script removed yet (its waiter
     * is alive after all); a place that is gone is not taken again (its waiter takes a new one at its next attempt,
     * at the back). Then the expired places of that line are removed; if that changed the head of the line of a free
     * lock, the new head is published (its waiter would otherwise sleep until its next poll), and if expired claims
     * of a write-free lock were removed, the bare name is published (the readers they held back may go). Returns
     * {ms until the earliest place at the head of a free lock's line expires (-1 if none), then the 1-based indexes
     * of the places kept}: the client beats again just after that, so a dead head's waiter is replaced at once.
     */
    static final Script KEEP_PLACES = Script.of("keep-places", """
            local now = now_ms()
            local ttl = tonumber(ARGV[1])
            local kept = {}
            local soonest = -1
            for i = 1, #KEYS / 3 do
              local line, expiry, grant = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
              local owner, channel, name = ARGV[3 * i - 1], ARGV[3 * i], ARGV[3 * i + 1]
              local free = redis.call('EXISTS', grant) == 0
              if line == expiry then
                if redis.call('ZSCORE', line, owner) then
                  redis.call('ZADD', line, 'XX', num(now + ttl), owner)
                  keep_at_least(line, ttl)
                  kept[#kept + 1] = i
                end
                local removed = redis.call('ZREMRANGEBYSCORE', line, '-inf', num(now))
                if removed > 0 and free then redis.call('PUBLISH', channel, name) end
              else
                if redis.call('ZSCORE', line, owner) then
                  redis.call('ZADD', expiry, num(now + ttl), owner)
                  keep_at_least(line, ttl)
                  keep_at_least(expiry, ttl)
                  kept[#kept + 1] = i
                end
                local before = redis.call('ZRANGE', line, 0, 0)[1]
                purge_line(line, expiry, now)
                local head = redis.call('ZRANGE', line, 0, 0)[1]
                if free and head then
                  if head ~= before then redis.call('PUBLISH', channel, name .. '\\0' .. head) end
                  local exp = tonumber(redis.call('ZSCORE', expiry, head))
                  if exp and (soonest < 0 or exp - now < soonest) then soonest = exp - now end
                end
              end
            end
            table.insert(kept, 1, soonest)
            return kept
            """);

    /**
     * The line of one lock, for introspection, after removing its expired places. KEYS: line, line expiry.
     * Returns {server now in ms, then per waiter in order: owner, arrival (µs), place expiry (ms)}, numbers as
     * strings.
     */
    static final Script LINE = Script.of("line", """
            local now = now_ms()
            purge_line(KEYS[1], KEYS[2], now)
            local out = {num(now)}
            local members = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
            for i = 1, #members, 2 do
              out[#out + 1] = members[i]
              out[#out + 1] = members[i + 1]
              out[#out + 1] = redis.call('ZSCORE', KEYS[2], members[i]) or '0'
            end
            return out
            """);
}
