package dev.baton.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code --html} report drawn from a made-up history on one lock: w0 holds with token 10 and releases; w1 is
 * granted token 11 and killed while holding it; w0 is granted token 11 again (a broken backend), which check (b)
 * reports; w1's replacement times out. The page must parse as XML and show each grant, the fault and the
 * violation.
 */
class HtmlReportTest {
    private static final long S = 1_000_000_000L;
    private static final long T0 = 50 * S;

    @TempDir
    Path dir;

    private Scenario.Proc proc(int index, int gen, long ended, Object[]... events) throws Exception {
        Path log = dir.resolve("w" + index + "." + gen + ".jsonl");
        StringBuilder lines = new StringBuilder();
        for (Object[] e : events) {
            lines.append(Json.object(e)).append('\n');
        }
        Files.writeString(log, lines);
        Scenario.Proc p = new Scenario.Proc(index, gen, null, log);
        p.ended = ended;
        p.exited = ended;
        return p;
    }

    private static Object[] ev(double at, String type, String op, String attempt, Object... more) {
        List<Object> kv = new ArrayList<>(List.of("t", T0 + (long) (at * S), "type", type, "op", op, "a", attempt,
                "lock", "lock-0"));
        kv.addAll(List.of(more));
        return kv.toArray();
    }

    private Analysis analysed() throws Exception {
        ScenarioSpec spec = new ScenarioSpec(Strategies.byName("lease"), "jdbc:sqlite:/tmp/x.db", "baton_check", 2, 1,
                Duration.ofSeconds(1), Duration.ofSeconds(3), "kill", 42, dir, Fence.STRICT,
                ScenarioSpec.DEFAULT_WORKER_JVM);
        List<Scenario.Proc> procs = List.of(
                proc(0, 0, -1,
                        ev(0.1, "invoke", "acquire", "w0.0.0", "tid", 5L),
                        ev(0.2, "ok", "acquire", "w0.0.0", "token", 10L),
                        ev(0.6, "invoke", "release", "w0.0.0"),
                        ev(0.61, "ok", "release", "w0.0.0"),
                        ev(0.7, "invoke", "acquire", "w0.0.1", "tid", 6L),
                        ev(2.2, "ok", "acquire", "w0.0.1", "token", 11L),
                        ev(2.5, "invoke", "release", "w0.0.1"),
                        ev(2.51, "ok", "release", "w0.0.1")),
                proc(1, 0, T0 + S,
                        ev(0.3, "invoke", "acquire", "w1.0.0", "tid", 7L),
                        ev(0.65, "ok", "acquire", "w1.0.0", "token", 11L)),
                proc(1, 1, -1,
                        ev(1.5, "invoke", "acquire", "w1.1.0", "tid", 8L),
                        ev(2.0, "fail", "acquire", "w1.1.0", "msg", "timed out")));
        List<Scenario.Fault> faults = List.of(new Scenario.Fault(0, "kill", "SIGKILL", 1, 0, 4242, "lock-0",
                "w1.0/4242/x#7", 11, T0 + S, T0 + S + 1_000_000, 1));
        List<ResourceServer.Access> accesses = List.of(
                new ResourceServer.Access(1, T0 + (long) (2.3 * S), "lock-0", 10, "write", "w0.0.9", false, 0, 11));
        Scenario.Record rec = new Scenario.Record(spec, "SQLite 3", "sqlite", procs, faults, List.of(), accesses,
                Map.of(), List.of(new Scenario.Probe("lock-0", true, 5, null)), List.of(), 0, T0, T0 + 3 * S,
                T0 + 3 * S, List.of(), Optional.empty());
        return new Analysis(rec);
    }

    @Test
    void drawsEveryGrantWithItsTokenTheFaultAndTheViolation() throws Exception {
        Analysis analysis = analysed();
        Analysis.Result result = analysis.analyse();
        assertThat(result.violations().get("b")).as("the duplicated token is a violation").isPositive();

        String page = HtmlReport.page("baton check --url jdbc:sqlite:/tmp/x.db --html r.html",
                List.of(HtmlReport.section(analysis, result)));

        assertThat(page).startsWith("<!DOCTYPE html>").doesNotContain("<script").doesNotContain("src=")
                .doesNotContain("href=");
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(page.getBytes(StandardCharsets.UTF_8)));
        assertThat(nodes(doc, "//*[local-name()='svg' and @data-lock='lock-0']").getLength()).isEqualTo(1);
        NodeList holds = nodes(doc, "//*[local-name()='g' and contains(@class,'hold')]");
        List<String> drawn = new ArrayList<>();
        for (int i = 0; i < holds.getLength(); i++) {
            Element g = (Element) holds.item(i);
            drawn.add(g.getAttribute("data-attempt") + "=" + g.getAttribute("data-token")
                    + (g.getAttribute("class").contains("violation") ? "!" : ""));
        }
        assertThat(drawn).containsExactlyInAnyOrder("w0.0.0=10", "w1.0.0=11!", "w0.0.1=11!");
        assertThat(text(doc, "//*[local-name()='g' and @data-attempt='w1.0.0']/*[local-name()='title']"))
                .contains("token 11").contains("t+0.650s to t+1.000s").contains("its process ended");
        NodeList faults = nodes(doc, "//*[local-name()='g' and contains(@class,'fault')]");
        assertThat(faults.getLength()).isEqualTo(1);
        assertThat(((Element) faults.item(0)).getAttribute("class")).isEqualTo("fault hit");
        assertThat(text(doc, "//*[local-name()='g' and contains(@class,'fault')]/*[local-name()='title']"))
                .contains("kill of w1.0").contains("t+1.000s").contains("hit the holder");
        assertThat(nodes(doc, "//*[local-name()='g' and @class='violation-mark']").getLength()).isPositive();
        assertThat(nodes(doc, "//*[local-name()='path' and @class='stale']").getLength()).isEqualTo(1);
        assertThat(nodes(doc, "//*[local-name()='line' and @class='wait']").getLength()).isEqualTo(4);
        assertThat(text(doc, "//*[local-name()='ol' and @class='violations']")).contains("token 11 granted to both");
    }

    /** Refused before any scenario runs, not after the whole run when the file is written. */
    @Test
    void aFileInADirectoryThatDoesNotExistIsRefusedAtOnce() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Path missing = dir.resolve("no-such-dir").resolve("r.html");
        int status = CheckCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), "--url",
                "jdbc:sqlite:" + dir.resolve("x.db"), "--html", missing.toString());
        assertThat(status).isEqualTo(CheckCommand.USAGE);
        assertThat(err.toString()).contains("--html: there is no directory " + missing.getParent() + " to write r.html in");
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void escapesWhatItQuotes() {
        assertThat(HtmlReport.esc("<a & 'b'>\"\u0001")).isEqualTo("&lt;a &amp; &#39;b&#39;&gt;&quot; ");
    }

    /**
     * For a real run (QuickProfileIT's SQLite run writes both files): the HTML report parses, and has a holder bar
     * with a token for every grant and a band for every fault the JSON report counts.
     */
    static void assertDrawsTheRun(Path html, Path json) throws Exception {
        JsonNode scenario = JsonMapper.builder().build().readTree(json.toFile()).get("scenarios").get(0);
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(html.toFile());
        NodeList holds = nodes(doc, "//*[local-name()='svg']//*[local-name()='g' and contains(@class,'hold')]");
        assertThat(holds.getLength()).as("holder bars").isEqualTo(scenario.get("grants").asInt()).isPositive();
        for (int i = 0; i < holds.getLength(); i++) {
            Element g = (Element) holds.item(i);
            assertThat(g.getAttribute("data-token")).as("token of %s", g.getAttribute("data-attempt")).matches("\\d+");
            assertThat(g.getTextContent()).contains("with token " + g.getAttribute("data-token"));
        }
        assertThat(nodes(doc, "//*[local-name()='g' and contains(@class,'fault')]").getLength()).as("fault marks")
                .isEqualTo(scenario.get("faults").asInt());
        assertThat(nodes(doc, "//*[local-name()='g' and @class='fault hit']").getLength()).as("faults that hit")
                .isEqualTo(scenario.get("hits").asInt());
    }

    private static NodeList nodes(Document doc, String xpath) throws Exception {
        return (NodeList) XPathFactory.newInstance().newXPath().evaluate(xpath, doc, XPathConstants.NODESET);
    }

    private static String text(Document doc, String xpath) throws Exception {
        return XPathFactory.newInstance().newXPath().evaluate(xpath, doc);
    }
}
