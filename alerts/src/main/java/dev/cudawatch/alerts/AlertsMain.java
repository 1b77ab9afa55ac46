package dev.cudawatch.alerts;

import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.common.config.ConfigLoader;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cudawatch alerts}: the alerts service on its own, against a Kafka cluster. */
@Command(
    name = "alerts",
    mixinStandardHelpOptions = true,
    description = "Serve Prometheus metrics, the incidents API and alert notifications.")
public final class AlertsMain implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "FILE", description = "alerts YAML configuration")
  Path config;

  @Option(
      names = "--bootstrap-servers",
      paramLabel = "HOST:PORT",
      description = "overrides kafka.bootstrap_servers")
  String bootstrap;

  @Option(names = "--http-port", description = "overrides http_port (default 9400)")
  Integer port;

  public static void main(String[] args) {
    System.exit(new CommandLine(new AlertsMain()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    AlertsSettings s =
        new ConfigLoader("CUDAWATCH_ALERTS", System.getenv()).load(config, AlertsSettings.class);
    s =
        s.with(
            bootstrap == null ? s.kafka() : s.kafka().withBootstrapServers(bootstrap),
            port == null ? s.httpPort() : port,
            s.notifications());
    s.validate("");
    CountDownLatch stop = new CountDownLatch(1);
    try (AlertsService service =
        new AlertsService(s, new Health(), System.out, Clock.systemUTC())) {
      service.start();
      System.err.println(
          "cudawatch alerts: serving http://"
              + s.httpHost()
              + ":"
              + service.httpPort()
              + "/metrics");
      Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
      stop.await();
    }
    return 0;
  }
}
