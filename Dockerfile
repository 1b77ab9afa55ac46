# Multi-stage build of every cudawatch image, as in Flink's operations playground: the first stage
# runs the Maven build, the others take the jars they need.
#   docker build --target agent -t cudawatch-agent .
#   docker build --target alerts -t cudawatch-alerts .
#   docker build --target processor -t cudawatch-processor .   (Flink image with the job jar)
#   docker build --target local -t cudawatch-local .
FROM eclipse-temurin:17.0.15_6-jdk AS build
WORKDIR /src
COPY .mvn .mvn
COPY mvnw pom.xml ./
COPY testkit/pom.xml testkit/
COPY common/pom.xml common/
COPY diagnosis/pom.xml diagnosis/
COPY kafka-embedded/pom.xml kafka-embedded/
COPY ingest/pom.xml ingest/
COPY processor/pom.xml processor/
COPY alerts/pom.xml alerts/
COPY launcher/pom.xml launcher/
COPY simulator/pom.xml simulator/
COPY bench/pom.xml bench/
# dependencies first, so a source change does not download them again. Every module's pom must be
# copied above (a test checks them against pom.xml's <modules>): with one missing the reactor does
# not load and this step would download nothing. It fails the build if it fails.
RUN ./mvnw -B -q dependency:go-offline -DexcludeReactor=true
COPY . .
RUN ./mvnw -B -q -DskipTests -Dspotless.check.skip=true package -pl launcher,processor,alerts,ingest -am

FROM eclipse-temurin:17.0.15_6-jre AS runtime
RUN useradd --system --uid 10001 cudawatch && mkdir -p /var/lib/cudawatch && chown cudawatch /var/lib/cudawatch
WORKDIR /opt/cudawatch

FROM runtime AS agent
COPY --from=build /src/ingest/target/cudawatch-agent.jar /opt/cudawatch/
USER cudawatch
EXPOSE 7461
ENTRYPOINT ["java", "-XX:+UseSerialGC", "-Xmx128m", "-cp", "/opt/cudawatch/cudawatch-agent.jar", "dev.cudawatch.ingest.AgentMain"]

FROM runtime AS alerts
COPY --from=build /src/alerts/target/cudawatch-alerts.jar /opt/cudawatch/
USER cudawatch
EXPOSE 7460
ENTRYPOINT ["java", "-Xmx512m", "-jar", "/opt/cudawatch/cudawatch-alerts.jar"]

# Everything in one JVM. Its HTTP server listens on 127.0.0.1 only (as on a laptop), so run it on
# the host's network, where that is the host's loopback:
#   docker run --rm --network host -v "$PWD/logs:/var/lib/cudawatch/logs" --user "$(id -u):$(id -g)" cudawatch-local
# It writes its broker data and logs under /var/lib/cudawatch, which the user it runs as owns.
FROM runtime AS local
COPY --from=build /src/launcher/target/cudawatch-local.jar /opt/cudawatch/
COPY samples /opt/cudawatch/samples
RUN install -d -o cudawatch -m 0777 /var/lib/cudawatch/logs /var/lib/cudawatch/data
USER cudawatch
WORKDIR /var/lib/cudawatch
EXPOSE 7460
ENTRYPOINT ["java", "-jar", "/opt/cudawatch/cudawatch-local.jar"]
CMD ["--logs", "/var/lib/cudawatch/logs", "--data-dir", "/var/lib/cudawatch/data", "--replay", "/opt/cudawatch/samples"]

# The Flink job: the official Flink image with the job jar in usrlib, for `flink run` from a
# client container, application mode, or the Flink Kubernetes operator (local:///opt/flink/usrlib/...).
FROM flink:2.2.1-java17 AS processor
COPY --from=build /src/processor/target/cudawatch-processor.jar /opt/flink/usrlib/cudawatch-processor.jar
