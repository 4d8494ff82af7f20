package dev.baton.bomit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The metadata Maven Central asks of every deployed POM (name, description, URL, licence, developers, SCM) is there
 * and right for each published module: a module's own POM has a name (Maven does not inherit it), and what it
 * inherits from baton-parent is baton-parent's value, not one with the module's artifactId appended (Maven's default
 * for the URL and the SCM locations, wrong for modules of one Git repository). And the README's module table has a
 * row for each.
 */
class PublishedPomsTest {

    private static final Path ROOT = Path.of(System.getProperty("baton.reactorRoot", "..")).toAbsolutePath().normalize();

    @Test
    void everyPublishedModuleNamesAndDescribesItself() throws Exception {
        List<String> published = publishedModules();
        assertThat(published).contains("baton-core", "baton-spring-boot-starter");
        for (String module : published) {
            Element project = pom(ROOT.resolve(module).resolve("pom.xml")).getDocumentElement();
            assertThat(text(project, "name")).as("<name> in %s/pom.xml (not inherited from baton-parent)", module)
                    .isNotBlank();
            assertThat(text(project, "description")).as("<description> in %s/pom.xml", module).isNotBlank();
            for (String inherited : List.of("url", "scm", "licenses", "developers")) {
                assertThat(child(project, inherited)).as("<%s> in %s/pom.xml: it inherits baton-parent's", inherited,
                        module).isNull();
            }
        }
    }

    @Test
    void aModuleInheritsTheParentsUrlAndScmUnchanged() throws Exception {
        Element parent = pom(ROOT.resolve("pom.xml")).getDocumentElement();
        Element scm = child(parent, "scm");
        Properties inherited = new Properties();
        try (InputStream in = PublishedPomsTest.class.getResourceAsStream("/inherited-metadata.properties")) {
            inherited.load(in);
        }
        assertThat(inherited.getProperty("url")).as("a module's project URL").isEqualTo(text(parent, "url"));
        for (String location : List.of("connection", "developerConnection", "url")) {
            assertThat(inherited.getProperty("scm." + location)).as("a module's scm %s", location)
                    .isEqualTo(text(scm, location));
        }
    }

    @Test
    void theBomRepeatsTheParentsMetadata() throws Exception {
        Element parent = pom(ROOT.resolve("pom.xml")).getDocumentElement();
        Element bom = pom(ROOT.resolve("baton-bom/pom.xml")).getDocumentElement();
        assertThat(text(bom, "name")).isNotBlank();
        assertThat(text(bom, "description")).isNotBlank();
        for (String element : List.of("url", "inceptionYear", "licenses", "developers", "scm")) {
            assertThat(normalized(child(bom, element))).as("<%s> in baton-bom/pom.xml and in pom.xml", element)
                    .isEqualTo(normalized(child(parent, element)));
        }
    }

    @Test
    void theReadmeListsEveryPublishedModule() throws Exception {
        String readme = Files.readString(ROOT.resolve("README.md"));
        for (String module : publishedModules()) {
            assertThat(readme).as("a row for %s in the README's module table (what it is for, what it depends on)",
                    module).containsPattern("(?m)^\\| `" + module + "` \\|[^|\\n]+\\|[^|\\n]+\\|$");
        }
    }

    @Test
    void buildsAreReproducible() throws Exception {
        Element properties = child(pom(ROOT.resolve("pom.xml")).getDocumentElement(), "properties");
        assertThat(text(properties, "project.build.outputTimestamp")).as("project.build.outputTimestamp in pom.xml")
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
        assertThat(ROOT.resolve("LICENSE")).exists();
    }

    private static List<String> publishedModules() throws Exception {
        List<String> published = new ArrayList<>();
        for (Element module : children(child(pom(ROOT.resolve("pom.xml")).getDocumentElement(), "modules"), "module")) {
            String name = module.getTextContent().trim();
            if (name.equals("baton-bom")) {
                continue;
            }
            Element properties = child(pom(ROOT.resolve(name).resolve("pom.xml")).getDocumentElement(), "properties");
            if (!"true".equals(properties == null ? null : text(properties, "maven.deploy.skip"))) {
                published.add(name);
            }
        }
        return published;
    }

    private static String normalized(Element element) {
        return element == null ? null : element.getTextContent().replaceAll("\\s+", " ").trim();
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? null : e.getTextContent().trim();
    }

    private static Document pom(Path file) throws Exception {
        assertThat(file).exists();
        try (var in = Files.newInputStream(file)) {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
        }
    }

    private static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node n = nodes.item(i);
            if (n instanceof Element e && e.getTagName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }
}
