package dev.cudawatch.kafka.embedded;

import dev.cudawatch.common.Topics;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * A standalone single-node broker for benchmarks and demos: {@code BrokerMain DATA_DIR PORT
 * CONTROLLER_PORT} prints its bootstrap address and runs until stopped.
 */
public final class BrokerMain {
  private BrokerMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: BrokerMain DATA_DIR PORT CONTROLLER_PORT");
      System.exit(2);
    }
    EmbeddedKafkaBroker b =
        EmbeddedKafkaBroker.start(
            Path.of(args[0]), Integer.parseInt(args[1]), Integer.parseInt(args[2]));
    b.createTopics(Topics.ALL, 2);
    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  b.close();
                  stop.countDown();
                }));
    System.out.println("broker " + b.bootstrapServers());
    System.out.flush();
    stop.await();
  }
}
