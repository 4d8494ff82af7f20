package dev.baton.checker;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * The credentials of a Redis URL's user-info, read as Lettuce reads them: {@code password} alone, or
 * {@code user:password} ({@code :password} has no user), each percent-decoded. The faults pass the password to
 * {@code redis-cli} in its environment, never on its command line.
 *
 * @param user     the ACL user, or null
 * @param password the password, or null
 */
record RedisUserInfo(String user, String password) {

    static final RedisUserInfo NONE = new RedisUserInfo(null, null);

    /** The credentials of {@code userInfo} (the part of the URL before {@code @}), or {@link #NONE} if null or empty. */
    static RedisUserInfo parse(String userInfo) {
        if (userInfo == null || userInfo.isEmpty()) {
            return NONE;
        }
        int colon = userInfo.indexOf(':');
        String user = colon > 0 ? decoded(userInfo.substring(0, colon)) : null;
        String password = decoded(colon >= 0 ? userInfo.substring(colon + 1) : userInfo);
        return new RedisUserInfo(user, password.isEmpty() ? null : password);
    }

    /** Percent-decoded; a literal {@code +} stays a plus, and text that is not percent-encoded stays as it is. */
    static String decoded(String s) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s; // not percent-encoded after all
        }
    }
}
