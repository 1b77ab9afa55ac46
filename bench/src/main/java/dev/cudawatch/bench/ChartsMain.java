package dev.cudawatch.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/** Draws bench/results/*.png from the figures bench/run collected in summary.json. */
public final class ChartsMain {
  private ChartsMain() {}

  public static void main(String[] args) throws Exception {
    JsonNode s = new ObjectMapper().readTree(Path.of(args[0]).toFile());
    Path out = Path.of(args[1]);
    String commit = s.path("commit").asText();

    JsonNode c = s.get("classifier");
    CategoryChart tp =
        new CategoryChartBuilder()
            .width(800)
            .height(450)
            .title("Classifier throughput, one core (commit " + commit + ")")
            .yAxisTitle("log10(lines/s)")
            .build();
    // log10 of the rates on a linear axis: they span three orders of magnitude
    tp.getStyler().setLegendVisible(false);
    tp.addSeries(
        "lines/s",
        List.of(
            "cudawatch engine (JMH)",
            "cudawatch classify",
            "ripgrep (keywords)",
            "mtail (keywords)"),
        List.of(
            Math.log10(c.get("engine_lps").asDouble()),
            Math.log10(c.get("classify_lps").asDouble()),
            Math.log10(Math.max(1, c.get("rg_lps").asDouble())),
            Math.log10(Math.max(1, c.get("mtail_lps").asDouble()))));
    BitmapEncoder.saveBitmap(
        tp, out.resolve("classifier.png").toString(), BitmapEncoder.BitmapFormat.PNG);

    XYChart lat =
        new XYChartBuilder()
            .width(800)
            .height(450)
            .title("Line written -> alert at /api/alerts, local mode (commit " + commit + ")")
            .xAxisTitle("background output, lines/s")
            .yAxisTitle("latency, ms")
            .build();
    lat.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    List<Double> rates = new ArrayList<>();
    List<Double> p50 = new ArrayList<>();
    List<Double> p99 = new ArrayList<>();
    for (JsonNode r : s.get("latency")) {
      rates.add(r.get("rate").asDouble());
      p50.add(r.get("p50").asDouble());
      p99.add(r.get("p99").asDouble());
    }
    lat.addSeries("p50", rates, p50);
    lat.addSeries("p99", rates, p99);
    BitmapEncoder.saveBitmap(
        lat, out.resolve("latency.png").toString(), BitmapEncoder.BitmapFormat.PNG);

    XYChart mem =
        new XYChartBuilder()
            .width(800)
            .height(450)
            .title("Cost as the fleet grows (commit " + commit + ")")
            .xAxisTitle("simulated nodes (8 GPUs each)")
            .yAxisTitle("MB")
            .build();
    mem.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    List<Double> hosts = new ArrayList<>();
    List<Double> rss = new ArrayList<>();
    List<Double> heap = new ArrayList<>();
    for (JsonNode a : s.get("agent")) {
      hosts.add(a.get("hosts").asDouble());
      rss.add(a.get("rss_mb").asDouble());
      heap.add(a.get("heap_mb").asDouble());
    }
    mem.addSeries("one agent following them all: peak RSS", hosts, rss);
    mem.addSeries("one agent: live heap", hosts, heap);
    List<Double> sh = new ArrayList<>();
    List<Double> st = new ArrayList<>();
    for (JsonNode a : s.get("state")) {
      sh.add(a.get("hosts").asDouble());
      st.add(a.get("bytes").asDouble() / 1e6);
    }
    mem.addSeries("Flink job: checkpointed state", sh, st);
    BitmapEncoder.saveBitmap(
        mem, out.resolve("scaling.png").toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
