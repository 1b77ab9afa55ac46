#!/usr/bin/env bash
# Builds target/cudawatch-local.jsa, an AppCDS archive of the classes `cudawatch local` loads until
# it runs and diagnoses a first failure, so bin/cudawatch starts it without parsing, verifying and
# spinning (lambdas) those classes again: ~6 s of CPU of a ~21 s start on 2 cores
# (bench/results/profile-local-start.md). Run by the package phase (-Dcds.skip=true skips it); the
# dump is classify's (diagnosis/src/build/cds-dump.sh). Any failure leaves no archive, and
# bin/cudawatch then starts local without one. The run has bin/cudawatch's JIT setting for local
# (C1 only), as the runs that use the archive do.
set -uo pipefail
java="$1" target="$2" dump="$3"
jar="$target/cudawatch-local.jar"
jsa="$target/cudawatch-local.jsa"
work="$target/cds"
rm -rf "$work" "$jsa"
mkdir -p "$work/logs"
"$java" -Xmx1g -XX:TieredStopAtLevel=1 -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off \
  -XX:DumpLoadedClassList="$work/local.classlist" -jar "$jar" --no-kernel-log --no-gpu-samples \
  --http-port 0 --data-dir "$work/data" --logs "$work/logs" >"$work/local.out" 2>&1 &
pid=$!
for ((i = 0; i < 3000; i++)); do # a loaded machine's start: up to 5 minutes
  grep -q 'cudawatch local: running' "$work/local.out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if grep -q 'cudawatch local: running' "$work/local.out"; then
  # a first failure, so the classes of a diagnosis and an alert are archived too
  echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB' >"$work/logs/probe.log"
  sleep 3
fi
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rm -rf "$work/data" "$work/logs"
if grep -q 'cudawatch local: running' "$work/local.out"; then
  bash "$dump" "$java" "$jar" "$jsa" "$work"
else
  echo "cds: local did not start (see $work/local.out); it starts without an archive"
fi
exit 0
