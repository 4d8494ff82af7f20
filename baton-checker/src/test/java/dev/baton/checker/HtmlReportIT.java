package dev.baton.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code baton check --html} on SQLite, as short as a run with faults gets (2 workers, 1 lock, kill, 1 s): the
 * file is written, parses, and has a holder bar with a token for every grant and a band for every fault the
 * JSON report counts.
 */
class HtmlReportIT {
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    @Test
    void aCheckerRunWritesATimelineOfItsGrantsAndFaults() throws Exception {
        Path html = dir.resolve("report.html");
        Path json = dir.resolve("report.json");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--profile", "quick",
                "--url", "jdbc:sqlite:" + dir.resolve("check.db"), "--faults", "kill", "--workers", "2", "--locks", "1",
                "--duration", "1s", "--seed", "3", "--work-dir", dir.resolve("work").toString(), "--json",
                json.toString(), "--html", html.toString());
        assertThat(status).as("baton check: %s%s", out, err).isIn(CheckCommand.PASS, CheckCommand.INCONCLUSIVE);
        assertThat(out.toString()).contains("HTML report: " + html);

        JsonNode scenario = JsonMapper.builder().build().readTree(json.toFile()).get("scenarios").get(0);
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(html.toFile());
        NodeList holds = nodes(doc, "//*[local-name()='svg' and @data-lock='lock-0']"
                + "//*[local-name()='g' and contains(@class,'hold')]");
        assertThat(holds.getLength()).isEqualTo(scenario.get("grants").asInt()).isPositive();
        for (int i = 0; i < holds.getLength(); i++) {
            Element g = (Element) holds.item(i);
            assertThat(g.getAttribute("data-token")).as("token of %s", g.getAttribute("data-attempt"))
                    .matches("\\d+");
            assertThat(g.getTextContent()).contains("with token " + g.getAttribute("data-token"));
        }
        assertThat(nodes(doc, "//*[local-name()='g' and contains(@class,'fault')]").getLength())
                .isEqualTo(scenario.get("faults").asInt());
        assertThat(nodes(doc, "//*[local-name()='g' and @class='fault hit']").getLength())
                .isEqualTo(scenario.get("hits").asInt());
    }

    private static NodeList nodes(Document doc, String xpath) throws Exception {
        return (NodeList) XPathFactory.newInstance().newXPath().evaluate(xpath, doc, XPathConstants.NODESET);
    }
}
