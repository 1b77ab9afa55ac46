#!/usr/bin/env bash
# Builds cudawatch's images (agent, alerts, local, processor) from the release tarball with podman,
# on the local bases of build-bases.sh (made first where missing), tagged as docker-compose.yml and
# deploy/k8s name them: cudawatch-agent:0.1.0, cudawatch-alerts:0.1.0, ...
#
#   deploy/images/build-images.sh [dist/target/cudawatch-VERSION-linux-x86_64.tar.gz]
#
# With Docker and a registry, build on the official bases instead: docker build --target agent .
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
tag=0.1.0 # the images' tag in docker-compose.yml and deploy/k8s
shopt -s nullglob
releases=("$repo"/dist/target/cudawatch-*-linux-x86_64.tar.gz)
release="${1:-${releases[0]:-}}"
[[ -n "$release" && -f "$release" ]] ||
  { echo "build-images: no release tarball in dist/target (build it: ./mvnw -q -DskipTests package)" >&2; exit 1; }
((${#releases[@]} <= 1)) || { echo "build-images: more than one release in dist/target: ${releases[*]}" >&2; exit 1; }

"$here/build-bases.sh" "$release"
for target in agent alerts local processor; do
  echo "build-images: cudawatch-$target:$tag" >&2
  podman build --quiet --layers \
    --build-arg BASE=localhost/cudawatch-base/debian:bookworm-slim \
    --build-arg FLINK_BASE=localhost/cudawatch-base/flink:2.2.1-java17 \
    --target "$target" -t "localhost/cudawatch-$target:$tag" -f "$repo/Dockerfile" "$repo" >/dev/null
done
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^localhost/cudawatch-' >&2
