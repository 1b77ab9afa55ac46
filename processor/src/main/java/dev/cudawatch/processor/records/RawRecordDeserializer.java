package dev.cudawatch.processor.records;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Keeps Kafka's bytes as they are; parsing happens in an operator that can dead-letter. */
public final class RawRecordDeserializer implements KafkaRecordDeserializationSchema<RawRecord> {
  private static final long serialVersionUID = 1L;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<RawRecord> out) {
    out.collect(new RawRecord(r.topic(), r.partition(), r.offset(), r.value()));
  }

  @Override
  public TypeInformation<RawRecord> getProducedType() {
    return RawRecordCodec.TYPE;
  }
}
