#!/bin/bash
KAFKA_LOG4J_CONFIG=/opt/kafka/config/tools-log4j2.properties KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx128m}" \
  exec /opt/kafka/bin/kafka-class org.apache.kafka.tools.TopicCommand "$@"
