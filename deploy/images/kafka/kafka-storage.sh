#!/bin/bash
exec /opt/kafka/bin/kafka-class kafka.tools.StorageTool "$@"
