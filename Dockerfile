# Every cudawatch image, from the release tarball the build makes (./mvnw -q -DskipTests package
# writes dist/target/cudawatch-VERSION-linux-x86_64.tar.gz); the tarball carries its own Java
# runtime (jlink), so the bases need only glibc, zlib and bash (for the healthchecks):
#   docker build --target agent -t cudawatch-agent:0.1.0 .
#   docker build --target alerts -t cudawatch-alerts:0.1.0 .
#   docker build --target processor -t cudawatch-processor:0.1.0 .   (Flink image with the job jar)
#   docker build --target local -t cudawatch-local:0.1.0 .
# The bases are build arguments: the official images by default; where no registry is reachable,
# deploy/images/build-bases.sh makes stand-ins from Debian packages and deploy/images/build-images.sh
# passes them (--build-arg BASE=localhost/cudawatch-base/debian:bookworm-slim ...).
ARG BASE=debian:bookworm-slim
ARG FLINK_BASE=flink:2.2.1-java17

# the release, unpacked to /opt/cudawatch (ADD unpacks a local tar.gz)
FROM ${BASE} AS release
ADD dist/target/cudawatch-*-linux-x86_64.tar.gz /tmp/release/
RUN set -e; n=$(ls -d /tmp/release/cudawatch-* | wc -l); \
    [ "$n" = 1 ] || { echo "expected one release in dist/target, found $n" >&2; exit 1; }; \
    mv /tmp/release/cudawatch-* /opt/cudawatch

FROM ${BASE} AS runtime
RUN useradd --system --uid 10001 cudawatch && mkdir -p /var/lib/cudawatch && chown cudawatch /var/lib/cudawatch
COPY --from=release /opt/cudawatch/runtime /opt/cudawatch/runtime
COPY --from=release /opt/cudawatch/bin /opt/cudawatch/bin
ENV PATH=/opt/cudawatch/bin:/opt/cudawatch/runtime/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /opt/cudawatch

FROM runtime AS agent
COPY --from=release /opt/cudawatch/lib/cudawatch-agent.jar /opt/cudawatch/lib/
USER cudawatch
EXPOSE 7461
# bin/cudawatch holds the agent's JVM options (one place for the packages, the tarball and images)
ENTRYPOINT ["/opt/cudawatch/bin/cudawatch", "agent"]

FROM runtime AS alerts
COPY --from=release /opt/cudawatch/lib/cudawatch-alerts.jar /opt/cudawatch/lib/
USER cudawatch
EXPOSE 7460
ENTRYPOINT ["/opt/cudawatch/bin/cudawatch", "alerts"]

# Everything in one JVM. Its HTTP server listens on 127.0.0.1 only (as on a laptop), so run it on
# the host's network, where that is the host's loopback:
#   docker run --rm --network host -v "$PWD/logs:/var/lib/cudawatch/logs" --user "$(id -u):$(id -g)" cudawatch-local:0.1.0
# It writes its broker data and logs under /var/lib/cudawatch, which the user it runs as owns.
FROM runtime AS local
COPY --from=release /opt/cudawatch/lib/cudawatch-local.jar /opt/cudawatch/lib/
COPY --from=release /opt/cudawatch/samples /opt/cudawatch/samples
RUN install -d -o cudawatch -m 0777 /var/lib/cudawatch/logs /var/lib/cudawatch/data
USER cudawatch
WORKDIR /var/lib/cudawatch
EXPOSE 7460
ENTRYPOINT ["/opt/cudawatch/bin/cudawatch", "local"]
CMD ["--logs", "/var/lib/cudawatch/logs", "--data-dir", "/var/lib/cudawatch/data", "--replay", "/opt/cudawatch/samples"]

# The Flink job: the Flink image with the job jar in usrlib, for `flink run` from a client
# container, application mode, or the Flink Kubernetes operator (local:///opt/flink/usrlib/...).
FROM ${FLINK_BASE} AS processor
COPY --from=release /opt/cudawatch/lib/cudawatch-processor.jar /opt/flink/usrlib/cudawatch-processor.jar
