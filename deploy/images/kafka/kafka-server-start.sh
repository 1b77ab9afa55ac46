#!/bin/bash
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx512m}" exec /opt/kafka/bin/kafka-class kafka.Kafka "$@"
