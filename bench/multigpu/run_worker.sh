#!/bin/sh
# One torchrun worker under cudawatch's `run` wrapper (torchrun --no-python run_worker.sh ARGS...):
# java (a jlink runtime) runs RunMain, which runs the Python program and passes its output through.
# Needs CW_RT (the runtime), CW_JAR (cudawatch-agent.jar), CW_SPOOL, CW_LOGS, CW_PY, CW_PROG, CW_JOB.
exec "$CW_RT/bin/java" -Xmx128m -XX:+UseSerialGC -Dcudawatch.run_spool_root="$CW_SPOOL" \
  -cp "$CW_JAR" dev.cudawatch.ingest.RunMain --job "$CW_JOB" --log-file "$CW_LOGS/run-$RANK.log" \
  -- "$CW_PY" "$CW_PROG" "$@"
