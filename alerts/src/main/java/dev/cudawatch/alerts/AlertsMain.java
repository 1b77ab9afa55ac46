package dev.cudawatch.alerts;

import dev.cudawatch.alerts.http.Health;
import dev.cudawatch.common.cli.Cli;
import dev.cudawatch.common.cli.LogOptions;
import dev.cudawatch.common.cli.ServiceOptions;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.http.DefaultPorts;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cudawatch alerts}: the alerts service on its own, against a Kafka cluster. */
@Command(
    name = "alerts",
    description = "Serve Prometheus metrics, the incidents API and alert notifications.")
public final class AlertsMain implements Callable<Integer> {
  @CommandLine.Mixin LogOptions logOptions;

  @CommandLine.Mixin ServiceOptions service;

  @Option(
      names = "--http-port",
      description = "overrides http_port (default " + DefaultPorts.ALERTS_HTTP + ")")
  Integer port;

  public static void main(String[] args) {
    Cli.main(new AlertsMain(), args);
  }

  @Override
  public Integer call() throws Exception {
    ConfigLoader loader = new ConfigLoader(AlertsSettings.ENV_PREFIX, System.getenv());
    AlertsSettings s = loader.load(service.config(), AlertsSettings.class);
    s =
        s.toBuilder()
            .kafka(service.kafka(s.kafka()))
            .httpPort(port == null ? s.httpPort() : port)
            .build();
    loader.validate(service.config(), s);
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
