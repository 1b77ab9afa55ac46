package dev.cudawatch.diagnosis.taxonomy;

import java.util.List;

/**
 * One class of the taxonomy, as taxonomy.yaml states it.
 *
 * @param id the class name incidents carry ({@code cuda_oom})
 * @param title what a person reads when no signature gives a summary
 * @param severity default severity: critical, error, warning, info
 * @param suspect default suspect: application, hardware, environment, infrastructure, framework,
 *     driver
 * @param explanation why it happens: a template over the fields ({@code {field}}, and {@code
 *     [parts]} dropped when a field in them is missing)
 * @param nextSteps what to do, templates as above, most useful first
 * @param advice logic that adds field-specific advice before the steps above, or null
 * @param lemonGpu counted by the lemon-GPU score and rule: a failure that may be the GPU's
 * @param xidCorrelation its part in the Xid correlation
 * @param detector the detector that produces it when no signature does ({@code memory_trend})
 * @param jobRole whether it can be a failed job's root cause or is what ranks report when another
 *     rank failed (default root)
 * @param kernelLog its incidents come from a node's kernel log, which names a GPU or a process, not
 *     a job: the job that held the GPU then owns them
 * @param kernelLineQuoted what a kernel-log class becomes when its line came from anything but a
 *     kernel source (a job's output): recorded, never acted on
 * @param fields the field names it may carry
 * @param gpuRecovery what the GPU health ledger records as asked for: {@code reset_gpu}, {@code
 *     reboot_node}, or {@code xid} (the Xid's recovery bucket decides); null for none
 * @param alert the alert name it pages under on its own, whatever its severity and also from a
 *     job's rank ({@code GpuMemoryLeak}); null: error and critical page as GpuJobFailure
 */
public record IncidentClass(
    String id,
    String title,
    String severity,
    String suspect,
    String explanation,
    List<String> nextSteps,
    AdviceLogic advice,
    boolean lemonGpu,
    XidRole xidCorrelation,
    String detector,
    JobRole jobRole,
    boolean kernelLog,
    boolean kernelLineQuoted,
    List<String> fields,
    String gpuRecovery,
    String alert) {

  public IncidentClass {
    nextSteps = nextSteps == null ? List.of() : List.copyOf(nextSteps);
    fields = fields == null ? List.of() : List.copyOf(fields);
    xidCorrelation = xidCorrelation == null ? XidRole.NONE : xidCorrelation;
    jobRole = jobRole == null ? JobRole.ROOT : jobRole;
  }
}
