package dev.baton.checker;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The checker's JSON, through Jackson: flat objects of strings, numbers, booleans and nulls, one per line in
 * event logs (written by the worker JVMs, read by the controller), and the {@code --json} report.
 */
final class Json {
    /** Compact output; whole numbers read back as {@link Long}, fractions as {@link Double}. */
    static final JsonMapper MAPPER = JsonMapper.builder().enable(DeserializationFeature.USE_LONG_FOR_INTS).build();
    private static final TypeReference<LinkedHashMap<String, Object>> FLAT = new TypeReference<>() {
    };

    private Json() {
    }

    /** A flat JSON object from alternating keys and values; null values are left out. */
    static String object(Object... keysAndValues) {
        return write(fields(keysAndValues));
    }

    /** Alternating keys and values as an ordered map, null values left out. */
    static Map<String, Object> fields(Object... keysAndValues) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            Object v = keysAndValues[i + 1];
            if (v != null) {
                out.put((String) keysAndValues[i], v);
            }
        }
        return out;
    }

    /** Any value as compact JSON. */
    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /**
     * Parses one flat object. Numbers become {@link Long} (or {@link Double} with a fraction), strings
     * {@link String}, literals {@link Boolean} or null.
     *
     * @throws IllegalArgumentException if the line is not a JSON object (a torn last line, say)
     */
    static Map<String, Object> parseFlat(String line) {
        try {
            Map<String, Object> out = MAPPER.readValue(line, FLAT);
            if (out == null) {
                throw new IllegalArgumentException("not a JSON object: " + line);
            }
            return out;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a JSON object: " + line, e);
        }
    }
}
