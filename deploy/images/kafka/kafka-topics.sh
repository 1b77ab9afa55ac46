#!/bin/bash
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx128m}" exec /opt/kafka/bin/kafka-class org.apache.kafka.tools.TopicCommand "$@"
