package dev.baton.bomit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * A published module (one whose POM does not set {@code maven.deploy.skip}) must be in baton-bom, in this module's
 * dependencies (so invoker:install gives it to the projects under src/it) and in src/it/users/all-modules (so it is
 * tested together with every other); a module that is not published must be in none of them. And the BOM's Netty is
 * the one the reactor builds and tests with.
 */
class BomListsEveryPublishedModuleTest {

    private static final Path ROOT = Path.of(System.getProperty("baton.reactorRoot", "..")).toAbsolutePath().normalize();
    private static final Set<String> NOT_LIBRARIES = Set.of("baton-bom", "baton-bom-it");

    @Test
    void everyPublishedModuleIsInTheBomAndTestedTogether() throws Exception {
        Set<String> published = new TreeSet<>();
        for (Element module : children(child(pom(ROOT.resolve("pom.xml")).getDocumentElement(), "modules"), "module")) {
            String name = module.getTextContent().trim();
            if (NOT_LIBRARIES.contains(name)) {
                continue;
            }
            Element properties = child(pom(ROOT.resolve(name).resolve("pom.xml")).getDocumentElement(), "properties");
            Element skip = properties == null ? null : child(properties, "maven.deploy.skip");
            if (skip == null || !skip.getTextContent().trim().equals("true")) {
                published.add(name);
            }
        }
        assertThat(published).as("published modules").contains("baton-core", "baton-jdbc", "baton-redis");

        assertThat(batonArtifacts(child(child(pom(ROOT.resolve("baton-bom/pom.xml")).getDocumentElement(),
                        "dependencyManagement"), "dependencies")))
                .as("dev.baton entries in baton-bom/pom.xml <dependencyManagement>, one line per published module")
                .isEqualTo(published);
        assertThat(batonArtifacts(child(pom(ROOT.resolve("baton-bom-it/pom.xml")).getDocumentElement(), "dependencies")))
                .as("dev.baton dependencies of baton-bom-it/pom.xml (what invoker:install provides), one line per"
                        + " published module")
                .isEqualTo(published);
        assertThat(batonArtifacts(child(pom(ROOT.resolve("baton-bom-it/src/it/users/all-modules/pom.xml"))
                        .getDocumentElement(), "dependencies")))
                .as("dev.baton dependencies of baton-bom-it/src/it/users/all-modules/pom.xml, one line per published"
                        + " module")
                .isEqualTo(published);
    }

    @Test
    void bomAlignsNettyAtTheVersionBatonIsBuiltWith() throws Exception {
        assertThat(property(ROOT.resolve("baton-bom/pom.xml"), "netty.version"))
                .as("netty.version in baton-bom/pom.xml and in pom.xml")
                .isEqualTo(property(ROOT.resolve("pom.xml"), "netty.version"));
    }

    private static Set<String> batonArtifacts(Element dependencies) {
        Set<String> found = new TreeSet<>();
        for (Element dependency : children(dependencies, "dependency")) {
            if (child(dependency, "groupId").getTextContent().trim().equals("dev.baton")) {
                String artifact = child(dependency, "artifactId").getTextContent().trim();
                if (!NOT_LIBRARIES.contains(artifact)) {
                    found.add(artifact);
                }
            }
        }
        return found;
    }

    private static String property(Path pom, String name) throws Exception {
        return child(child(pom(pom).getDocumentElement(), "properties"), name).getTextContent().trim();
    }

    private static Document pom(Path file) throws Exception {
        assertThat(file).exists();
        try (var in = Files.newInputStream(file)) {
            return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(in);
        }
    }

    private static Element child(Element parent, String name) {
        for (Element e : children(parent, name)) {
            return e;
        }
        return null;
    }

    private static Iterable<Element> children(Element parent, String name) {
        java.util.List<Element> out = new java.util.ArrayList<>();
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
