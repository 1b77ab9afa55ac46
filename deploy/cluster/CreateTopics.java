// Creates cudawatch's topics on the cluster with replication 3 (min.insync.replicas 2 comes from the
// brokers). Run by cluster.sh in Java's source-file mode: java -cp cudawatch-local.jar CreateTopics.java BOOTSTRAP
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;

public class CreateTopics {
  public static void main(String[] args) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", args[0]))) {
      admin
          .createTopics(
              List.of(
                  new NewTopic("cudawatch.logs", 4, (short) 3),
                  new NewTopic("cudawatch.incidents", 2, (short) 3),
                  new NewTopic("cudawatch.alerts", 2, (short) 3),
                  new NewTopic("cudawatch.deadletter", 1, (short) 3)))
          .all()
          .get();
      System.out.println("topics: " + admin.listTopics().names().get());
    }
  }
}
