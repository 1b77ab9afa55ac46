#!/usr/bin/env bash
# Dumps the AppCDS archive JSA of JAR from the class lists WORK/*.classlist (-XX:DumpLoadedClassList
# of runs that loaded what is to be archived). Shared by classify's archive (cds-archive.sh here)
# and local's (launcher/src/build/cds-archive.sh). A JDK that cannot dump an archive leaves none, and
# bin/cudawatch then starts without it.
set -uo pipefail
java="$1" jar="$2" jsa="$3" work="$4"
# in load order, each line once: an @lambda-proxy line must follow the class that makes it, which
# sorting would break (the lambdas would then be spun, with ASM, at every run)
awk '!seen[$0]++' "$work"/*.classlist >"$work/all.classlist"
if "$java" -Xshare:dump -XX:+UseSerialGC -XX:SharedClassListFile="$work/all.classlist" \
  -XX:SharedArchiveFile="$jsa" -cp "$jar" >"$work/dump.log" 2>&1; then
  echo "cds: $(grep -c . "$work/all.classlist") classes archived in $jsa"
else
  rm -f "$jsa"
  echo "cds: this JDK could not dump an archive (see $work/dump.log); $(basename "$jar") starts without one"
fi
exit 0
