package dev.cudawatch.alerts.store;

import dev.cudawatch.common.wire.Incident;
import dev.cudawatch.common.wire.JobFailure;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The most recent failed jobs from {@code cudawatch.job-failures}, newest first (by arrival),
 * bounded in count: past {@code capacity} the one received longest ago leaves first, and is
 * counted. A record with an id already held replaces it and counts as new (the processor
 * re-publishes a failure when it learns more about it).
 */
public final class JobFailureStore {
  private final int capacity;
  // insertion order is arrival order: the eldest entry is the first to leave
  private final LinkedHashMap<String, JobFailure> byId = new LinkedHashMap<>();
  private long evicted;
  private long replaced;

  public JobFailureStore(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1");
    }
    this.capacity = capacity;
  }

  /** Records a failure; true when its id was new. */
  public synchronized boolean add(JobFailure f) {
    boolean known = byId.remove(f.id()) != null; // re-inserted: it is the newest now
    byId.put(f.id(), f);
    if (known) {
      replaced++;
    }
    while (byId.size() > capacity) {
      byId.remove(byId.keySet().iterator().next());
      evicted++;
    }
    return !known;
  }

  /** Every failure {@code p} accepts, newest first. */
  private List<JobFailure> newestFirst(Predicate<JobFailure> p) {
    List<JobFailure> out = new ArrayList<>();
    for (JobFailure f : byId.values()) {
      if (p.test(f)) {
        out.add(f);
      }
    }
    java.util.Collections.reverse(out);
    return out;
  }

  /** A page of failures of {@code job} (null: any) that touched {@code host} (null: any). */
  public synchronized Page query(String job, String host, int offset, int limit) {
    List<JobFailure> all =
        newestFirst(
            f ->
                (job == null || job.equals(f.job()))
                    && (host == null || host.equals(f.host()) || f.hosts().contains(host)));
    int from = Math.min(offset, all.size());
    return new Page(List.copyOf(all.subList(from, Math.min(all.size(), from + limit))), all.size());
  }

  /** The job's latest failure (the one received last). */
  public synchronized Optional<JobFailure> latest(String job) {
    return newestFirst(f -> job.equals(f.job())).stream().findFirst();
  }

  /**
   * The failure an incident belongs to: the one naming it as root or consequence, else (the
   * consequence list is capped) the job's newest failure whose time span holds the incident.
   */
  public synchronized Optional<JobFailure> forIncident(Incident i) {
    if (i.job() == null) {
      return Optional.empty();
    }
    List<JobFailure> ofJob = newestFirst(f -> i.job().equals(f.job()));
    for (JobFailure f : ofJob) {
      if (i.id().equals(f.rootId()) || f.consequences().contains(i.id())) {
        return Optional.of(f);
      }
    }
    Instant t = i.eventTime() != null ? i.eventTime() : i.detectedTime();
    return ofJob.stream().filter(f -> within(t, f)).findFirst();
  }

  private static boolean within(Instant t, JobFailure f) {
    return t != null
        && f.firstAt() != null
        && f.lastAt() != null
        && !t.isBefore(f.firstAt())
        && !t.isAfter(f.lastAt());
  }

  public synchronized int size() {
    return byId.size();
  }

  /** Failures forgotten to stay within the capacity. */
  public synchronized long evicted() {
    return evicted;
  }

  /** Records that replaced a held one of the same id. */
  public synchronized long replaced() {
    return replaced;
  }

  /** A page of failures and how many matched in all. */
  public record Page(List<JobFailure> items, int total) {}
}
