#!/usr/bin/env bash
# Makes, from Debian packages and Maven Central artifacts, the base images that stand in for the
# official ones where no image registry is reachable (CI, air-gapped sites). Idempotent: an image
# that exists is kept unless its sources here, or for Kafka and Flink the release's runtime and local jar,
# changed (a label holds their hash; --rebuild makes them all again).
#
#   deploy/images/build-bases.sh [--rebuild] RELEASE.tar.gz
#
#   localhost/cudawatch-base/debian:bookworm-slim     for debian:bookworm-slim (minbase, bash,
#                                                     busybox's wget for healthchecks, CA certificates)
#   localhost/cudawatch-base/kafka:4.2.2              for apache/kafka:4.2.2
#   localhost/cudawatch-base/flink:2.2.1-java17       for flink:2.2.1-java17
#   localhost/cudawatch-base/prometheus:bookworm      for prom/prometheus (Debian's prometheus)
#   localhost/cudawatch-base/alertmanager:bookworm    for prom/alertmanager (prometheus-alertmanager)
#   localhost/cudawatch-base/http-echo:1              for mendhak/http-https-echo
#
# Kafka and Flink run from the release itself: its lib/cudawatch-local.jar holds their classes
# (from Maven Central, as deploy/cluster/cluster.sh uses them) and runtime/ is the Java they run on;
# Kafka's CLI tools (kafka-tools, for kafka-topics.sh) and Flink's Prometheus reporter plugin come
# from Maven Central through ./mvnw.
# Needs podman, mmdebstrap and a JDK (javac) on the host; run as root.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
rebuild=false
[[ "${1:-}" == --rebuild ]] && { rebuild=true; shift; }
release="${1:?usage: build-bases.sh [--rebuild] RELEASE.tar.gz (dist/target/cudawatch-*-linux-x86_64.tar.gz)}"
[[ -f "$release" ]] || { echo "build-bases: no release tarball $release (build it: ./mvnw -q -DskipTests package)" >&2; exit 1; }
release="$(cd "$(dirname "$release")" && pwd)/$(basename "$release")"

prefix=localhost/cudawatch-base
suite=bookworm
mirror="${DEBIAN_MIRROR:-}" # empty: mmdebstrap's default (deb.debian.org, or the host's apt proxy settings)
kafka_version=4.2.2
argparse4j_version=0.7.0

work="$(mktemp -d /tmp/cudawatch-bases.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# exists NAME [SOURCE-DIR]: the image is there, made from these sources
exists() {
  ! $rebuild && podman image exists "$1" &&
    [[ "$(podman image inspect --format '{{index .Labels "cudawatch.sources"}}' "$1")" == "$(sources "${2:-}")" ]]
}
# the hash of this script, of a directory's files and, for the images made from the release (Kafka,
# Flink), of its runtime and local jar: a rebuilt release makes them again
sources() {
  {
    cat "${BASH_SOURCE[0]}" ${1:+"$here/$1"/*}
    if [[ "${1:-}" == kafka || "${1:-}" == flink ]]; then echo "${release_hash:?}"; fi
  } | sha256sum | cut -c1-16
}
# build NAME DIR CONTEXT [ARGS...]: podman build of DIR/Containerfile, labelled with its sources' hash
build() {
  local name="$1" dir="$2" context="$3"
  shift 3
  podman build --quiet --label "cudawatch.sources=$(sources "$dir")" "$@" -t "$name" \
    -f "$here/$dir/Containerfile" "$context" >/dev/null
}
say() { echo "build-bases: $*" >&2; }

# rootfs NAME PACKAGES...: a minbase Debian with bash, busybox's wget and CA certificates, imported
rootfs() {
  local name="$1" pkgs
  shift
  pkgs="bash,busybox,ca-certificates,zlib1g${*:+,$(IFS=,; echo "$*")}"
  say "mmdebstrap $suite $pkgs -> $name"
  # apt's lists and caches are of no use in an image; wget is what healthchecks call
  mmdebstrap --quiet --variant=minbase --include="$pkgs" \
    --customize-hook='ln -sf /bin/busybox "$1/usr/bin/wget"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/usr/share/doc/* "$1"/usr/share/man/*' \
    "$suite" "$work/rootfs.tar" $mirror
  podman import --quiet --change 'CMD ["/bin/bash"]' --change "LABEL cudawatch.sources=$(sources)" \
    "$work/rootfs.tar" "$name" >/dev/null
  rm -f "$work/rootfs.tar"
}

debian="$prefix/debian:$suite-slim"
exists "$debian" || rootfs "$debian"

# the release's Java runtime and its jar with Kafka's and Flink's classes, as a build context
ctx="$work/ctx"
mkdir -p "$ctx"
tar -C "$work" -xzf "$release" --wildcards '*/runtime/*' '*/lib/cudawatch-local.jar'
mv "$work"/cudawatch-*/runtime "$ctx/runtime"
mv "$work"/cudawatch-*/lib/cudawatch-local.jar "$ctx/cudawatch-local.jar"
release_hash="$(cat "$ctx/cudawatch-local.jar" "$ctx/runtime/release" | sha256sum | cut -c1-16)"

kafka="$prefix/kafka:$kafka_version"
if ! exists "$kafka" kafka; then
  say "$kafka"
  # kafka-topics.sh is Kafka's own TopicCommand, in kafka-tools (not in the local jar)
  mkdir -p "$ctx/tools"
  for a in "org.apache.kafka:kafka-tools:$kafka_version" "net.sourceforge.argparse4j:argparse4j:$argparse4j_version"; do
    "$repo/mvnw" -q -B -f "$repo/pom.xml" -N dependency:copy -Dartifact="$a" -DoutputDirectory="$ctx/tools" >&2
  done
  cp "$here"/kafka/* "$ctx/"
  build "$kafka" kafka "$ctx" --build-arg BASE="$debian"
fi

flink="$prefix/flink:2.2.1-java17"
if ! exists "$flink" flink; then
  say "$flink"
  # the distribution's plugins/metrics-prometheus (deploy/flink/config.yaml turns its reporter on)
  "$repo/mvnw" -q -B -f "$repo/pom.xml" -N dependency:copy -Dartifact="org.apache.flink:flink-metrics-prometheus:2.2.1" \
    -DoutputDirectory="$ctx/plugins/metrics-prometheus" >&2
  cp "$here"/flink/* "$ctx/"
  build "$flink" flink "$ctx" --build-arg BASE="$debian"
fi

echo_image="$prefix/http-echo:1"
if ! exists "$echo_image" echo; then
  say "$echo_image"
  javac --release 17 -d "$ctx/echo" "$here/echo/HttpEcho.java"
  build "$echo_image" echo "$ctx" --build-arg BASE="$debian"
fi

prom_root="$prefix/debian-prometheus:$suite"
prometheus="$prefix/prometheus:$suite"
alertmanager="$prefix/alertmanager:$suite"
if ! exists "$prometheus" prometheus || ! exists "$alertmanager" prometheus; then
  exists "$prom_root" || rootfs "$prom_root" prometheus prometheus-alertmanager
  for target in prometheus alertmanager; do
    say "$prefix/$target:$suite"
    build "$prefix/$target:$suite" prometheus "$here/prometheus" --build-arg BASE="$prom_root" --target "$target"
  done
fi
say "bases ready: $(podman images --format '{{.Repository}}:{{.Tag}}' | grep -c "^$prefix/") images under $prefix"
