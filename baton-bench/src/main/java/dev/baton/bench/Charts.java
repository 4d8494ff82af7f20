package dev.baton.bench;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.BoxAndWhiskerRenderer;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.statistics.BoxAndWhiskerItem;
import org.jfree.data.statistics.DefaultBoxAndWhiskerCategoryDataset;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.geom.Ellipse2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.List;

/**
 * W2's results as two PNG charts, drawn with JFreeChart: hand-overs per second per subject, and the spread of
 * each subject's waits. Both use a logarithmic axis: the subjects differ by three orders of magnitude.
 */
final class Charts {
    /** A wait of 0 µs cannot sit on a log axis: it is drawn at 1 µs. */
    private static final double MIN_WAIT_MS = 0.001;
    private static final int WIDTH = 960;
    private static final int ROW_HEIGHT = 26;
    private static final Color BATON = new Color(0x1f, 0x77, 0xb4);
    private static final Color OTHER = new Color(0xa0, 0xa0, 0xa0);
    private static final Color CROSS = new Color(0xff, 0x7f, 0x0e);

    private Charts() {
    }

    /**
     * Writes {@code <name>-handovers.png} and {@code <name>-waits.png} into {@code dir} for every name given
     * (the run's own name and its {@code latest-} name); returns the files written. Subjects that failed to run
     * are left out.
     */
    static List<Path> write(List<Contended.Result> results, String subtitle, Path dir, String... names)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<Contended.Result> ok = results.stream().filter(r -> r.error() == null && r.grants() > 0).toList();
        List<Path> written = new ArrayList<>();
        if (ok.isEmpty()) {
            return written;
        }
        JFreeChart handovers = handovers(ok, subtitle);
        JFreeChart waits = waits(ok, subtitle);
        int height = 140 + ROW_HEIGHT * ok.size();
        Files.createDirectories(dir);
        for (String name : names) {
            Path h = dir.resolve(name + "-handovers.png");
            ChartUtils.saveChartAsPNG(h.toFile(), handovers, WIDTH, height + 30);
            Path w = dir.resolve(name + "-waits.png");
            ChartUtils.saveChartAsPNG(w.toFile(), waits, WIDTH, height);
            written.add(h);
            written.add(w);
        }
        return written;
    }

    /** Horizontal bars: all grants per second and the cross-client hand-overs among them. */
    static JFreeChart handovers(List<Contended.Result> results, String subtitle) {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (Contended.Result r : results) {
            data.addValue(Math.max(r.grantsPerSecond(), 1), "grants/s (any thread)", r.subject());
            data.addValue(Math.max(r.crossClientPerSecond(), 1), "cross-client hand-overs/s", r.subject());
        }
        LogAxis axis = logAxis("per second (log scale)");
        BarRenderer bars = new BarRenderer();
        bars.setBarPainter(new StandardBarPainter());
        bars.setShadowVisible(false);
        bars.setItemMargin(0.05);
        bars.setSeriesPaint(0, OTHER);
        bars.setSeriesPaint(1, CROSS);
        bars.setBase(1);
        bars.setDefaultItemLabelGenerator(new StandardCategoryItemLabelGenerator("{2}", new DecimalFormat("#,##0")));
        bars.setDefaultItemLabelsVisible(true);
        bars.setDefaultPositiveItemLabelPosition(new ItemLabelPosition(ItemLabelAnchor.OUTSIDE3, TextAnchor.CENTER_LEFT));
        bars.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 9));
        CategoryPlot plot = new CategoryPlot(data, categoryAxis(), axis, bars);
        plot.setOrientation(PlotOrientation.HORIZONTAL);
        return chart("W2: hand-overs per second, " + Contended.CLIENTS + " clients × "
                + Contended.THREADS_PER_CLIENT + " threads on one lock (more is better)", subtitle, plot, true);
    }

    /**
     * One box per subject: the box spans the middle half of the waits (p25–p75) with the median marked, the
     * whiskers reach p1 and p99, the dot is the longest wait.
     */
    static JFreeChart waits(List<Contended.Result> results, String subtitle) {
        DefaultBoxAndWhiskerCategoryDataset data = new DefaultBoxAndWhiskerCategoryDataset();
        // the box renderer draws no outliers on a horizontal plot: the longest wait is a second dataset of dots
        DefaultCategoryDataset longest = new DefaultCategoryDataset();
        for (Contended.Result r : results) {
            long[] w = r.waitMicros();
            double max = ms(w, 1.0);
            data.add(new BoxAndWhiskerItem(null, ms(w, 0.5), ms(w, 0.25), ms(w, 0.75), ms(w, 0.01), ms(w, 0.99),
                    MIN_WAIT_MS, max, List.of()), "p1–p99 (box p25–p75, median)", r.subject());
            longest.addValue(max, "longest wait", r.subject());
        }
        BoxAndWhiskerRenderer boxes = new BoxAndWhiskerRenderer();
        boxes.setMeanVisible(false);
        boxes.setSeriesPaint(0, BATON);
        boxes.setSeriesOutlinePaint(0, Color.DARK_GRAY);
        boxes.setUseOutlinePaintForWhiskers(true);
        boxes.setMaximumBarWidth(0.6);
        boxes.setDefaultStroke(new BasicStroke(1.2f));
        CategoryPlot plot = new CategoryPlot(data, categoryAxis(), logAxis("wait, acquire called to acquire returned"
                + " (ms, log scale)"), boxes);
        LineAndShapeRenderer dots = new LineAndShapeRenderer(false, true);
        dots.setSeriesPaint(0, Color.RED.darker());
        dots.setSeriesShape(0, new Ellipse2D.Double(-3.5, -3.5, 7, 7));
        plot.setDataset(1, longest);
        plot.setRenderer(1, dots);
        plot.setOrientation(PlotOrientation.HORIZONTAL);
        return chart("W2: how long each acquire waited — box p25–p75 with the median,"
                + " whiskers p1–p99, dot the longest (less is better)", subtitle, plot, true);
    }

    private static double ms(long[] sortedMicros, double q) {
        return Math.max(Contended.quantile(sortedMicros, q) / 1000.0, MIN_WAIT_MS);
    }

    private static CategoryAxis categoryAxis() {
        CategoryAxis axis = new CategoryAxis();
        axis.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        axis.setCategoryMargin(0.15);
        axis.setLowerMargin(0.01);
        axis.setUpperMargin(0.01);
        return axis;
    }

    private static LogAxis logAxis(String label) {
        LogAxis axis = new LogAxis(label);
        axis.setBase(10);
        axis.setTickUnit(new NumberTickUnit(1));
        axis.setMinorTickMarksVisible(true);
        axis.setMinorTickCount(9);
        axis.setNumberFormatOverride(new DecimalFormat("#,##0.###"));
        axis.setSmallestValue(MIN_WAIT_MS);
        return axis;
    }

    private static JFreeChart chart(String title, String subtitle, CategoryPlot plot, boolean legend) {
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(new Color(0xd0, 0xd0, 0xd0));
        plot.setRangeGridlineStroke(new BasicStroke(0.8f));
        plot.setRangeMinorGridlinesVisible(true);
        plot.setRangeMinorGridlinePaint(new Color(0xee, 0xee, 0xee));
        JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 14), plot, legend);
        chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 11)));
        chart.setBackgroundPaint(Color.WHITE);
        return chart;
    }
}
