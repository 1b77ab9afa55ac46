package dev.cudawatch.simulator;

import java.util.Map;

/**
 * What cudawatch should detect, written to the ground-truth file (one JSON object per line).
 *
 * @param atMillis when the failure's first line was written (simulated time)
 * @param type {@code incident}, {@code alert}, or {@code job_failure} (one per failed distributed
 *     job, {@code name} its root class)
 * @param name the incident class, or the alert name
 * @param root for incidents: a root (true) or a consequence of an earlier failure (false)
 * @param labels where: host, job, rank, gpu as they apply, and for a rank's failure the launch of
 *     its job ({@link JobPlacement.Launch}, lower case); for a job failure its consequences
 * @param scenario which injected scenario produced it
 * @param needsRealTime the detection measures wall-clock time (silence), so it is only expected
 *     when the simulation runs in real time
 */
public record Expected(
    long atMillis,
    String type,
    String name,
    boolean root,
    Map<String, String> labels,
    String scenario,
    boolean needsRealTime) {}
