package dev.baton.checker;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The checker's JSON: flat objects of strings, numbers, booleans and nulls, one per line in event logs.
 * Written and read here so the checker needs no JSON library; {@link #parseFlat} reads only what
 * {@link #object} writes (and any other flat object).
 */
final class Json {
    private Json() {
    }

    /** A flat JSON object from alternating keys and values; null values are left out. */
    static String object(Object... keysAndValues) {
        StringBuilder sb = new StringBuilder(96).append('{');
        boolean first = true;
        for (int i = 0; i < keysAndValues.length; i += 2) {
            Object v = keysAndValues[i + 1];
            if (v == null) {
                continue;
            }
            if (!first) {
                sb.append(',');
            }
            first = false;
            quote(sb, (String) keysAndValues[i]);
            sb.append(':');
            value(sb, v);
        }
        return sb.append('}').toString();
    }

    static void value(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Number || v instanceof Boolean) {
            sb.append(v);
        } else if (v instanceof RawJson raw) {
            sb.append(raw.json());
        } else {
            quote(sb, v.toString());
        }
    }

    /** Already-serialised JSON, inserted as is. */
    record RawJson(String json) {
    }

    static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    /**
     * Parses one flat object. Numbers become {@link Long} (or {@link Double} with a fraction), strings
     * {@link String}, literals {@link Boolean} or null.
     *
     * @throws IllegalArgumentException if the line is not a flat JSON object (a torn last line, say)
     */
    static Map<String, Object> parseFlat(String line) {
        Map<String, Object> out = new LinkedHashMap<>();
        int[] pos = {skip(line, 0)};
        expect(line, pos, '{');
        pos[0] = skip(line, pos[0]);
        if (peek(line, pos) == '}') {
            return out;
        }
        while (true) {
            pos[0] = skip(line, pos[0]);
            String key = string(line, pos);
            pos[0] = skip(line, pos[0]);
            expect(line, pos, ':');
            pos[0] = skip(line, pos[0]);
            out.put(key, parseValue(line, pos));
            pos[0] = skip(line, pos[0]);
            char c = peek(line, pos);
            pos[0]++;
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                throw new IllegalArgumentException("expected , or } at " + (pos[0] - 1) + " in " + line);
            }
        }
    }

    private static Object parseValue(String s, int[] pos) {
        char c = peek(s, pos);
        if (c == '"') {
            return string(s, pos);
        }
        if (s.startsWith("true", pos[0])) {
            pos[0] += 4;
            return Boolean.TRUE;
        }
        if (s.startsWith("false", pos[0])) {
            pos[0] += 5;
            return Boolean.FALSE;
        }
        if (s.startsWith("null", pos[0])) {
            pos[0] += 4;
            return null;
        }
        int start = pos[0];
        while (pos[0] < s.length() && "+-0123456789.eE".indexOf(s.charAt(pos[0])) >= 0) {
            pos[0]++;
        }
        String num = s.substring(start, pos[0]);
        if (num.isEmpty()) {
            throw new IllegalArgumentException("bad value at " + start + " in " + s);
        }
        return num.contains(".") || num.contains("e") || num.contains("E") ? (Object) Double.parseDouble(num)
                : (Object) Long.parseLong(num);
    }

    private static String string(String s, int[] pos) {
        expect(s, pos, '"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos[0] >= s.length()) {
                throw new IllegalArgumentException("unterminated string in " + s);
            }
            char c = s.charAt(pos[0]++);
            if (c == '"') {
                return sb.toString();
            }
            if (c == '\\') {
                char e = s.charAt(pos[0]++);
                switch (e) {
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'u' -> {
                        sb.append((char) Integer.parseInt(s.substring(pos[0], pos[0] + 4), 16));
                        pos[0] += 4;
                    }
                    default -> sb.append(e);
                }
            } else {
                sb.append(c);
            }
        }
    }

    private static char peek(String s, int[] pos) {
        if (pos[0] >= s.length()) {
            throw new IllegalArgumentException("unexpected end of " + s);
        }
        return s.charAt(pos[0]);
    }

    private static void expect(String s, int[] pos, char c) {
        if (peek(s, pos) != c) {
            throw new IllegalArgumentException("expected " + c + " at " + pos[0] + " in " + s);
        }
        pos[0]++;
    }

    private static int skip(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }
}
