#!/usr/bin/env bash
# Builds target/cudawatch-classify.jsa, an AppCDS archive of every class that classify and classes
# load (text and --json reports, small files and chunked large ones), so bin/cudawatch starts them
# without parsing or verifying those classes again. Run by the package phase; a JDK that cannot
# dump an archive leaves none, and bin/cudawatch then starts without it.
set -uo pipefail
java="$1" target="$2" warmup="$3"
jar="$target/cudawatch-classify.jar"
jsa="$target/cudawatch-classify.jsa"
work="$target/cds"
rm -rf "$work" "$jsa"
mkdir -p "$work"
quiet=(-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off -XX:+UseSerialGC)
"$java" "${quiet[@]}" -XX:DumpLoadedClassList="$work/text.classlist" -jar "$jar" --no-color "$warmup" "$warmup" >/dev/null
"$java" "${quiet[@]}" -XX:DumpLoadedClassList="$work/json.classlist" -jar "$jar" --json "$warmup" >/dev/null
# a file larger than one chunk (ParallelClassifier.DEFAULT_CHUNK_BYTES, 4 MiB) takes the chunked,
# prefiltered path, whose classes the small warm-up log never loads
cp "$warmup" "$work/big.log"
while [[ $(stat -c %s "$work/big.log") -lt $((5 << 20)) ]]; do
  cat "$work/big.log" "$work/big.log" >"$work/big.tmp" && mv "$work/big.tmp" "$work/big.log"
done
"$java" "${quiet[@]}" -XX:DumpLoadedClassList="$work/big.classlist" -jar "$jar" --json "$work/big.log" >/dev/null
rm -f "$work/big.log"
"$java" "${quiet[@]}" -XX:DumpLoadedClassList="$work/classes.classlist" -cp "$jar" dev.cudawatch.diagnosis.cli.ClassesCommand >/dev/null
bash "$(dirname "$0")/cds-dump.sh" "$java" "$jar" "$jsa" "$work"
