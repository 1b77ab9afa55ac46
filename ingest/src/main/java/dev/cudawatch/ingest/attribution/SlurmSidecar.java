package dev.cudawatch.ingest.attribution;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The file {@code deploy/slurm/prolog.sh} writes per job on each node ({@code
 * /run/cudawatch/slurm/<jobid>.json}): the job, its user, this node's name and the GPU indexes the
 * job holds here, and its output paths as scontrol expanded them.
 *
 * <pre>{"job_id":"4","array_job":null,"user":"alice","node":"vm","gpus":[1,2],
 *  "std_out":"/home/alice/train-4.out","std_err":"/home/alice/train-4.err",
 *  "work_dir":"/home/alice","gpus_from":"scontrol show job -d","uid":1000}</pre>
 *
 * @param jobId {@code SLURM_JOB_ID}
 * @param arrayJob {@code A_a} for an array task ({@code SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID}),
 *     or null
 * @param user the job's user, or null
 * @param node this node's Slurm name, or null
 * @param gpus GPU indexes the job holds on this node
 * @param stdOut standard output path, or null
 * @param stdErr standard error path, or null
 * @param gpusFrom where the prolog learnt the GPUs ({@code SLURM_JOB_GPUS}, {@code scontrol show
 *     job -d}), or null
 * @param uid the job user's uid ({@code SLURM_JOB_UID}), or null (sidecars of older prologs)
 */
public record SlurmSidecar(
    String jobId,
    String arrayJob,
    String user,
    String node,
    List<Integer> gpus,
    String stdOut,
    String stdErr,
    String gpusFrom,
    Integer uid) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Parses one sidecar; an {@link IOException} with a one-line reason when it is not one. */
  public static SlurmSidecar parse(String text) throws IOException {
    JsonNode n;
    try {
      n = JSON.readTree(text);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IOException("not JSON: " + e.getOriginalMessage());
    }
    if (n == null || !n.isObject() || !n.path("job_id").isTextual() && !n.path("job_id").isInt()) {
      throw new IOException("no job_id");
    }
    String id = n.path("job_id").asText();
    if (!id.matches("[0-9]{1,12}")) {
      throw new IOException("job_id " + id + " is not a Slurm job id");
    }
    List<Integer> gpus = new ArrayList<>();
    for (JsonNode g : n.path("gpus")) {
      if (g.canConvertToInt() && g.asInt() >= 0) {
        gpus.add(g.asInt());
      }
      if (gpus.size() > 1024) {
        throw new IOException("more than 1024 GPUs");
      }
    }
    return new SlurmSidecar(
        id,
        text(n, "array_job"),
        text(n, "user"),
        text(n, "node"),
        List.copyOf(gpus),
        text(n, "std_out"),
        text(n, "std_err"),
        text(n, "gpus_from"),
        n.path("uid").canConvertToInt() && n.path("uid").asInt() >= 0
            ? n.path("uid").asInt()
            : null);
  }

  private static String text(JsonNode n, String key) {
    JsonNode v = n.get(key);
    return v == null || v.isNull() || v.asText().isBlank() ? null : v.asText();
  }
}
