#!/usr/bin/env bash
# Builds the release of docs/install.md in dist/target (run by dist's package phase):
#   cudawatch-VERSION/                 the unpacked release: bin, lib, runtime, conf, systemd, slurm, samples
#   cudawatch-VERSION-linux-x86_64.tar.gz
#   cudawatch-classify-VERSION.jar     classify alone, for any Java 17
#   deb/agent.tar, deb/server.tar      the installed trees of the two Debian packages, which jdeb
#                                      (the next execution) wraps with their control files
# The runtime is jlink'd once and reused while its module list and the JDK are unchanged: jlink
# is most of this script's time.
set -euo pipefail
java_home="$1" version="$2" root="$3" target="$4"
name="cudawatch-$version"
stage="$target/$name"
src="$root/dist/src"

# What the jars load, found by running classify, agent, run and local on this runtime (the dist
# ITs do): Kafka's SASL/Kerberos and JMX, Flink's SQL types, java.beans and RMI-free JMX, TLS
# with EC keys, zip file systems, JDK HTTP servers, the management beans of the metrics, DNS.
modules=java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,java.naming
modules+=,java.net.http,java.rmi,java.scripting,java.security.jgss,java.security.sasl,java.sql
modules+=,java.transaction.xa,java.xml,jdk.crypto.ec,jdk.httpserver,jdk.management,jdk.naming.dns
modules+=,java.management.rmi,jdk.net,jdk.security.auth,jdk.unsupported,jdk.zipfs
jlink_opts=(--strip-debug --no-header-files --no-man-pages --compress=2 --generate-cds-archive)

runtime="$target/runtime"
stamp="$("$java_home/bin/java" -version 2>&1 | tr '\n' ' ') ${jlink_opts[*]} $modules"
if [[ ! -x "$runtime/bin/java" || "$(cat "$target/runtime.stamp" 2>/dev/null)" != "$stamp" ]]; then
  rm -rf "$runtime" "$target/runtime.stamp"
  "$java_home/bin/jlink" "${jlink_opts[@]}" --add-modules "$modules" --output "$runtime"
  printf '%s' "$stamp" >"$target/runtime.stamp"
fi

jar() {
  local from="$root/$1"
  [[ -f "$from" ]] || {
    echo "release.sh: $from is missing (build the whole reactor: ./mvnw -DskipTests package)" >&2
    exit 1
  }
  cp "$from" "$2"
}

rm -rf "$stage"
mkdir -p "$stage"/{bin,lib,conf,systemd,slurm}
cp "$root/bin/cudawatch" "$stage/bin/"
jar ingest/target/cudawatch-agent.jar "$stage/lib/"
jar diagnosis/target/cudawatch-classify.jar "$stage/lib/"
jar alerts/target/cudawatch-alerts.jar "$stage/lib/"
jar launcher/target/cudawatch-local.jar "$stage/lib/"
jar processor/target/cudawatch-processor.jar "$stage/lib/"
jar simulator/target/cudawatch-simulate.jar "$stage/lib/"
cp -al "$runtime" "$stage/runtime"
cp "$root/deploy/slurm/agent.yaml" "$src/conf/alerts.yaml" "$src/conf/processor.yaml" "$stage/conf/"
cp "$root/deploy/slurm/cudawatch-agent.service" "$stage/systemd/"
for s in prolog.sh epilog.sh epilog-diagnose.sh cudawatch-srun cudawatch-slurm.env; do
  cp -p "$root/deploy/slurm/$s" "$stage/slurm/"
done
cp -r "$root/samples" "$stage/samples"
cp "$root/LICENSE" "$stage/"
chmod -R u+rwX,go+rX,go-w "$stage"
chmod 755 "$stage/bin/cudawatch" "$stage/slurm/"*.sh "$stage/slurm/cudawatch-srun"

# sorted names, fixed owner and mtimes: the same jars make the same tarball
tar_opts=(--sort=name --owner=root:0 --group=root:0 --mtime=@0 --format=gnu)
tar "${tar_opts[@]}" -C "$target" -czf "$target/$name-linux-x86_64.tar.gz" "$name"
cp "$stage/lib/cudawatch-classify.jar" "$target/cudawatch-classify-$version.jar"

# The packages' installed trees (docs/install.md): the agent package holds the launcher, the
# runtime and the agent and classify jars; the server package the rest.
debroot="$target/deb"
rm -rf "$debroot"
mkdir -p "$debroot"
agent="$debroot/agent" server="$debroot/server"
mkdir -p "$agent"/usr/lib/cudawatch/lib "$agent"/usr/bin "$agent"/etc/cudawatch \
  "$agent"/lib/systemd/system "$agent"/usr/share/doc/cudawatch-agent
cp -a "$stage/bin" "$stage/runtime" "$stage/slurm" "$agent/usr/lib/cudawatch/"
cp -a "$stage/lib/cudawatch-agent.jar" "$stage/lib/cudawatch-classify.jar" "$agent/usr/lib/cudawatch/lib/"
ln -s ../lib/cudawatch/bin/cudawatch "$agent/usr/bin/cudawatch"
ln -s ../lib/cudawatch/slurm/cudawatch-srun "$agent/usr/bin/cudawatch-srun"
cp "$stage/conf/agent.yaml" "$agent/etc/cudawatch/"
cp "$stage/systemd/cudawatch-agent.service" "$agent/lib/systemd/system/"
cp "$src/deb/copyright" "$agent/usr/share/doc/cudawatch-agent/"

mkdir -p "$server"/usr/lib/cudawatch/lib "$server"/etc/cudawatch "$server"/usr/share/doc/cudawatch
for j in local processor alerts simulate; do
  cp -a "$stage/lib/cudawatch-$j.jar" "$server/usr/lib/cudawatch/lib/"
done
cp -a "$stage/samples" "$server/usr/lib/cudawatch/"
cp "$stage/conf/alerts.yaml" "$stage/conf/processor.yaml" "$server/etc/cudawatch/"
cp "$src/deb/copyright" "$server/usr/share/doc/cudawatch/"
for p in agent server; do
  chmod -R u+rwX,go+rX,go-w "$debroot/$p"
  # ./-prefixed members as dpkg-deb writes them; jdeb takes owners and modes from the entries
  tar "${tar_opts[@]}" -C "$debroot/$p" -cf "$debroot/$p.tar" .
done
echo "release: $(du -h "$target/$name-linux-x86_64.tar.gz" | cut -f1) $target/$name-linux-x86_64.tar.gz"
