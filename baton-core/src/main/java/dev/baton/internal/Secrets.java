package dev.baton.internal;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one place where Baton's tools hide the secrets of backend URLs before anything is printed: messages, command
 * lines, reports (text and JSON), stack traces; kept here so that the CLI and the checker hide them alike (not part of
 * the library's API). Every form a backend accepts is covered:
 * <ul>
 *   <li>the user-info of any {@code scheme://…@}: the part after its first {@code :} ({@code user:***@}), or all of
 *       it for the Redis schemes ({@code redis}, {@code rediss}, {@code redis+ssl}, {@code redis-sentinel},
 *       {@code redis-socket} …), where Lettuce takes a user-info without a colon as the password
 *       ({@code redis://***@host}). The user-info runs up to the last {@code @} before a {@code ?}, a quote or a
 *       blank, so a password with {@code /} or {@code @} in it is hidden whole;</li>
 *   <li>the value of every parameter whose name contains {@code password}, {@code passwd}, {@code pwd} or
 *       {@code secret}, in any case, after {@code ?}, {@code &}, {@code ;} or {@code (} (pgjdbc {@code password},
 *       {@code sslpassword}; MariaDB {@code password}, {@code trustStorePassword}, {@code keyStorePassword},
 *       {@code address=(…)(password=…)}; Redis Sentinel {@code sentinelPassword}, whose value in a Redis URL ends
 *       at the {@code #} of the master's name).</li>
 * </ul>
 * {@link #hide(String, Collection)} also removes a URL's secrets wherever else they appear in the text, as written
 * and percent-decoded (a driver repeats what it decoded). Over-hiding is preferred to printing a secret.
 *
 * <p>Stateless and thread-safe.
 */
public final class Secrets {
    /** What a secret is replaced by. */
    public static final String MASK = "***";
    private static final Pattern USER_INFO = Pattern.compile("(?i)([a-z][a-z0-9+.\\-]*)://([^\\s?'\"`]*)@");
    private static final String NAME = "[a-z0-9_.\\-]*(?:password|passwd|pwd|secret)[a-z0-9_.\\-]*=";
    private static final Pattern PARAMETER = Pattern.compile("(?i)([?&;]" + NAME + ")([^&;\\s'\"`]+)");
    private static final Pattern ADDRESS_PARAMETER = Pattern.compile("(?i)(\\(" + NAME + ")([^)\\s'\"`]+)");

    private Secrets() {
    }

    /** {@code text} with the secrets of every URL written in it replaced by {@value #MASK}. */
    public static String hide(String text) {
        if (text == null) {
            return null;
        }
        String out = hideUserInfo(text);
        out = PARAMETER.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + MASK));
        return ADDRESS_PARAMETER.matcher(out).replaceAll(m -> Matcher.quoteReplacement(m.group(1) + MASK));
    }

    /**
     * As {@link #hide(String)}, and every secret of these URLs removed wherever else it appears in {@code text}, as
     * written and percent-decoded.
     */
    public static String hide(String text, Collection<String> urls) {
        if (text == null) {
            return null;
        }
        String out = text;
        Set<String> secrets = new LinkedHashSet<>();
        for (String url : urls) {
            secrets.addAll(of(url));
        }
        List<String> longestFirst = new ArrayList<>(secrets);
        longestFirst.sort(Comparator.comparingInt(String::length).reversed());
        for (String secret : longestFirst) {
            out = out.replace(secret, MASK);
        }
        return hide(out);
    }

    /** The secrets written in a URL, as written and percent-decoded, longest first. */
    public static List<String> of(String url) {
        Set<String> found = new LinkedHashSet<>();
        Matcher u = USER_INFO.matcher(url);
        while (u.find()) {
            String secret = userInfoSecret(u.group(1), u.group(2));
            if (secret != null) {
                found.add(secret);
            }
        }
        boolean redis = url.regionMatches(true, 0, "redis", 0, "redis".length());
        for (Pattern p : List.of(PARAMETER, ADDRESS_PARAMETER)) {
            Matcher m = p.matcher(url);
            while (m.find()) {
                String value = m.group(2);
                found.add(value);
                int hash = value.indexOf('#');
                if (redis && hash >= 0) {
                    // a Redis URL's fragment (redis-sentinel://…?sentinelPassword=P#master) is not the value's
                    found.add(value.substring(0, hash));
                }
            }
        }
        Set<String> all = new LinkedHashSet<>();
        for (String s : found) {
            if (!s.isEmpty()) {
                all.add(s);
                all.add(decoded(s));
            }
        }
        List<String> list = new ArrayList<>(all);
        list.sort(Comparator.comparingInt(String::length).reversed());
        return list;
    }

    private static String hideUserInfo(String text) {
        Matcher m = USER_INFO.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String userInfo = m.group(2);
            String secret = userInfoSecret(m.group(1), userInfo);
            String shown = secret == null ? userInfo : userInfo.substring(0, userInfo.length() - secret.length()) + MASK;
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + "://" + shown + "@"));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The secret part of a user-info: after its first colon; all of it for Redis; else none (a user name). */
    private static String userInfoSecret(String scheme, String userInfo) {
        int colon = userInfo.indexOf(':');
        if (colon >= 0) {
            return userInfo.substring(colon + 1);
        }
        return scheme.toLowerCase(Locale.ROOT).startsWith("redis") && !userInfo.isEmpty() ? userInfo : null;
    }

    private static String decoded(String s) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s; // not percent-encoded after all
        }
    }
}
