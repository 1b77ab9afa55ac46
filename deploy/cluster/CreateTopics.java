// Creates cudawatch's topics with the settings each needs (TopicSetup, the job's own table), using
// the brokers' default partitions and replication (cluster.sh sets 4 and 3; min.insync.replicas 2).
// Run by cluster.sh in Java's source-file mode: java -cp cudawatch-local.jar CreateTopics.java BOOTSTRAP
import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.TopicSetup;
import java.util.Map;
import java.util.Optional;

public class CreateTopics {
  public static void main(String[] args) throws Exception {
    TopicSetup.Report r =
        TopicSetup.ensure(
            Map.of("bootstrap.servers", args[0]),
            TopicSetup.wanted(ProcessorSettings.defaults()),
            Optional.empty(),
            Optional.empty());
    System.out.println(r.summary());
  }
}
