package dev.cudawatch.common.wire;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One failed job: every incident of the job across hosts and ranks within a session, reduced to its
 * root cause and the consequences that point at it (a 64-rank job that dies is one record).
 *
 * @param v wire version
 * @param id stable id: the job and its root incident's id
 * @param job the job
 * @param rootId the root cause's incident id
 * @param rootClass the root cause's class
 * @param host where the root cause happened
 * @param rank the root cause's rank, or null
 * @param gpu the root cause's GPU, or null (unknown)
 * @param summary the root cause's summary
 * @param consequences ids of the other incidents (capped; {@code consequenceCount} is exact)
 * @param consequenceCount how many other incidents the failure had
 * @param hosts the hosts the job's incidents came from, sorted
 * @param ranks how many distinct ranks reported an incident
 * @param firstAt event time of the earliest incident
 * @param lastAt event time of the latest incident
 * @param cause how the culprit was found ({@code hung_outside_collective}, {@code earlier_error},
 *     {@code killed}, {@code silent_rank}, {@code first_failure}); null from older writers
 * @param evidence the facts the culprit rests on, one sentence each
 */
public record JobFailure(
    int v,
    String id,
    String job,
    String rootId,
    String rootClass,
    String host,
    Integer rank,
    String gpu,
    String summary,
    List<String> consequences,
    int consequenceCount,
    List<String> hosts,
    int ranks,
    Instant firstAt,
    Instant lastAt,
    String cause,
    List<String> evidence) {

  public JobFailure {
    evidence = evidence == null ? List.of() : List.copyOf(evidence);
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(job, "job");
    consequences = consequences == null ? List.of() : List.copyOf(consequences);
    hosts = hosts == null ? List.of() : List.copyOf(hosts);
  }
}
