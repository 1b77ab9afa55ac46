package dev.cudawatch.processor;

import dev.cudawatch.common.Topics;
import dev.cudawatch.processor.config.ProcessorSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Makes cudawatch's topics exist with the settings {@link Topics#configs} asks for, as Kafka
 * Connect and Kafka Streams create their own topics: missing topics are created (the cluster's
 * default partitions and replication unless given), and an existing topic whose settings differ
 * (say, the logs topic auto-created with the producer's clock) is altered. Idempotent.
 */
public final class TopicSetup {
  private static final long TIMEOUT_S = 30;

  /** What one run changed. */
  public record Report(List<String> created, List<String> altered) {
    public String summary() {
      return "topics created " + created + ", altered " + altered;
    }
  }

  private TopicSetup() {}

  /**
   * The topics a job with these settings reads and writes, with the settings each needs. Every
   * input topic is a logs topic, a shipper's included: Fluent Bit and Vector stamp their records
   * with the node's clock too.
   */
  public static Map<String, Map<String, String>> wanted(ProcessorSettings s) {
    Map<String, Map<String, String>> out = new java.util.TreeMap<>();
    Topics.ALL.forEach(t -> out.put(t, Topics.configs(t)));
    s.inputs().forEach(i -> out.put(i.topic(), Topics.configs(Topics.LOGS)));
    return out;
  }

  /** The client properties of a job with these settings, for an admin client. */
  public static Map<String, Object> clientProps(ProcessorSettings s) {
    Map<String, Object> p = new java.util.HashMap<>(s.kafka().properties());
    p.put("bootstrap.servers", s.kafka().bootstrapServers());
    return p;
  }

  /**
   * @param wanted each topic and the settings it needs
   * @param partitions partitions of a created topic, or empty for the broker's default
   * @param replication replication of a created topic, or empty for the broker's default
   */
  public static Report ensure(
      Map<String, Object> clientProps,
      Map<String, Map<String, String>> wanted,
      Optional<Integer> partitions,
      Optional<Short> replication)
      throws Exception {
    try (Admin admin = Admin.create(clientProps)) {
      Set<String> listed = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
      List<String> created = new ArrayList<>();
      List<NewTopic> todo = new ArrayList<>();
      Set<String> existing = new java.util.HashSet<>(listed);
      for (var t : wanted.entrySet()) {
        if (!existing.contains(t.getKey())) {
          todo.add(new NewTopic(t.getKey(), partitions, replication).configs(t.getValue()));
        }
      }
      for (NewTopic n : todo) {
        try {
          admin.createTopics(List.of(n)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
          created.add(n.name());
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof TopicExistsException)) {
            throw e;
          }
          existing.add(n.name()); // another process made it first: check its settings below
        }
      }
      List<String> altered = new ArrayList<>();
      for (var t : wanted.entrySet()) {
        if (existing.contains(t.getKey())
            && !t.getValue().isEmpty()
            && alter(admin, t.getKey(), t.getValue())) {
          altered.add(t.getKey());
        }
      }
      return new Report(List.copyOf(created), List.copyOf(altered));
    }
  }

  private static boolean alter(Admin admin, String topic, Map<String, String> configs)
      throws Exception {
    ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    Config now =
        admin.describeConfigs(List.of(res)).all().get(TIMEOUT_S, TimeUnit.SECONDS).get(res);
    List<AlterConfigOp> ops = new ArrayList<>();
    configs.forEach(
        (k, v) -> {
          ConfigEntry e = now.get(k);
          if (e == null || !v.equals(e.value())) {
            ops.add(new AlterConfigOp(new ConfigEntry(k, v), AlterConfigOp.OpType.SET));
          }
        });
    if (ops.isEmpty()) {
      return false;
    }
    admin.incrementalAlterConfigs(Map.of(res, ops)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    return true;
  }
}
