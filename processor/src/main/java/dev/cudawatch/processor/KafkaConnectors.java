package dev.cudawatch.processor;

import dev.cudawatch.processor.config.ProcessorSettings;
import dev.cudawatch.processor.formats.InputSettings;
import dev.cudawatch.processor.records.JsonSerializer;
import dev.cudawatch.processor.records.KeySerializer;
import dev.cudawatch.processor.records.RawRecord;
import dev.cudawatch.processor.records.RawRecordDeserializer;
import java.util.Optional;
import java.util.Properties;
import org.apache.flink.api.common.serialization.SerializationSchema;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacet;
import org.apache.flink.connector.kafka.lineage.KafkaDatasetFacetProvider;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.ProducerRecord;

/** The job's Kafka source and exactly-once sinks, built from {@link ProcessorSettings}. */
public final class KafkaConnectors {
  private KafkaConnectors() {}

  @SuppressWarnings("deprecation") // the connector's API still takes OffsetResetStrategy
  public static KafkaSource<RawRecord> logSource(ProcessorSettings s) {
    Properties p = new Properties();
    p.putAll(s.kafka().properties());
    return KafkaSource.<RawRecord>builder()
        .setBootstrapServers(s.kafka().bootstrapServers())
        .setTopics(s.inputs().stream().map(InputSettings::topic).toList())
        .setGroupId(s.groupId())
        .setProperties(p)
        .setProperty("isolation.level", "read_committed")
        .setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
        .setDeserializer(new RawRecordDeserializer())
        .build();
  }

  /** An EXACTLY_ONCE sink: records become visible to read_committed readers at each checkpoint. */
  public static <T> KafkaSink<T> exactlyOnceSink(
      ProcessorSettings s, String topic, SerializableFunction<T, String> key) {
    Properties p = new Properties();
    p.putAll(s.kafka().properties());
    p.put("transaction.timeout.ms", String.valueOf(s.transactionTimeoutMs()));
    return KafkaSink.<T>builder()
        .setBootstrapServers(s.kafka().bootstrapServers())
        .setKafkaProducerConfig(p)
        .setRecordSerializer(
            new WrittenNow<>(
                KafkaRecordSerializationSchema.<T>builder()
                    .setTopic(topic)
                    .setKeySerializationSchema(new KeySerializer<>(key))
                    .setValueSerializationSchema(new JsonSerializer<T>())
                    .build()))
        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
        .setTransactionalIdPrefix(s.transactionalIdPrefix() + "-" + topic)
        // a small pool of transactional ids reused, not a new one per checkpoint (the default):
        // each new id costs an InitProducerId round trip inside the checkpoint, and the broker
        // keeps every id it saw for transactional.id.expiration.ms (7 days), which at local's
        // 100 ms checkpoints is 100 new ids a second (5 sinks, 2 subtasks). One-way: the
        // connector moves a job's savepoint from incrementing to pooled ids, not back. Aborting
        // lingering transactions then lists them (ListTransactions: Describe on the prefix's ids
        // where ACLs are on).
        .setTransactionNamingStrategy(TransactionNamingStrategy.POOLING)
        .build();
  }

  /**
   * Stamps each output record with the time it is written, not its event time: the broker refuses
   * records stamped more than {@code log.message.timestamp.after.max.ms} (1 h) ahead, so one
   * incident from a clock far in the future would fail the sink, and the job, on every retry.
   */
  static final class WrittenNow<T>
      implements KafkaRecordSerializationSchema<T>, KafkaDatasetFacetProvider {
    private static final long serialVersionUID = 1L;
    private final KafkaRecordSerializationSchema<T> inner;

    WrittenNow(KafkaRecordSerializationSchema<T> inner) {
      this.inner = inner;
    }

    @Override
    public void open(SerializationSchema.InitializationContext ctx, KafkaSinkContext sink)
        throws Exception {
      inner.open(ctx, sink);
    }

    @Override
    public ProducerRecord<byte[], byte[]> serialize(
        T element, KafkaSinkContext ctx, Long timestamp) {
      return inner.serialize(element, ctx, null);
    }

    /** The topic written: pooled transactional ids need it to find lingering transactions. */
    @Override
    public Optional<KafkaDatasetFacet> getKafkaDatasetFacet() {
      return inner instanceof KafkaDatasetFacetProvider p
          ? p.getKafkaDatasetFacet()
          : Optional.empty();
    }
  }
}
