package dev.baton.spring.boot;

import org.junit.jupiter.api.Test;
import org.springframework.boot.json.BasicJsonParser;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter ships {@code META-INF/spring-configuration-metadata.json} (generated from {@link BatonProperties}), so
 * IDEs complete and document {@code baton.*}: every property in it has a description, and its properties are the ones
 * the properties table of docs/SPRING-BOOT.md documents.
 */
class ConfigurationMetadataTest {

    @Test
    void everyPropertyIsDescribedForIdesAndDocumented() throws IOException, URISyntaxException {
        Map<String, String> described = new TreeMap<>();
        // the starter's own (Spring Boot's jars on the class path have theirs too): where BatonProperties was built
        Path file = Path.of(BatonProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .resolve("META-INF/spring-configuration-metadata.json");
        assertThat(file).as("the starter's configuration metadata").exists();
        {
            Map<String, Object> metadata = new BasicJsonParser().parseMap(withoutLayout(Files.readString(file)));
            for (Object p : (List<?>) metadata.get("properties")) {
                Map<?, ?> property = (Map<?, ?>) p;
                described.put((String) property.get("name"), (String) property.get("description"));
            }
        }
        assertThat(described).containsKeys("baton.enabled", "baton.lease-time", "baton.jdbc.table");
        described.forEach((name, description) ->
                assertThat(description).as("description of %s (the Javadoc of its field)", name).isNotBlank());

        Set<String> documented = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `(baton\\.[a-z.-]+)` \\|")
                .matcher(Files.readString(Path.of("../docs/SPRING-BOOT.md")));
        while (row.find()) {
            documented.add(row.group(1));
        }
        assertThat(documented).as("properties in docs/SPRING-BOOT.md's table").isEqualTo(described.keySet());
    }

    /** The JSON without the white space between its tokens, which BasicJsonParser takes for array elements. */
    private static String withoutLayout(String json) {
        StringBuilder out = new StringBuilder(json.length());
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                out.append(c);
                if (c == '\\') {
                    out.append(json.charAt(++i));
                } else if (c == '"') {
                    inString = false;
                }
            } else if (!Character.isWhitespace(c)) {
                out.append(c);
                inString = c == '"';
            }
        }
        return out.toString();
    }
}
