package dev.cudawatch.diagnosis.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What the asserting kernel's source file says about the bad input of a device-side assert. */
final class AssertAdvice implements FieldAdvice {
  @Override
  public Advice advise(Map<String, Object> f) {
    String file = String.valueOf(f.getOrDefault("kernel_file", ""));
    List<String> steps = new ArrayList<>();
    String hint;
    if (file.contains("Index") || file.contains("ScatterGather") || file.contains("Embedding")) {
      hint =
          "an index out of range: an index tensor (embedding ids, gather/scatter/index_select"
              + " indices) holds a value outside the size of the dimension it indexes.";
      steps.add(
          "Check the index tensor's min and max against the indexed dimension (for embeddings: vocabulary size; tokenizer and model must agree).");
    } else if (file.contains("Loss") || file.contains("NLL") || file.contains("CrossEntropy")) {
      hint =
          "a target outside [0, num_classes): a label in the batch is negative or too large for the loss.";
      steps.add(
          "Check the labels' min and max against the number of classes; look for an ignore_index mismatch.");
    } else {
      hint =
          "an assert() inside a kernel failed, usually because of bad input data (indices, labels, NaN checks).";
    }
    steps.add(
        "Rerun with CUDA_LAUNCH_BLOCKING=1 (or on CPU) to get the exact failing operation and a readable error.");
    steps.add("Build or run with TORCH_USE_CUDA_DSA to get device-side assertion details.");
    return new Advice(
        "A device-side assert fired"
            + (f.containsKey("kernel_file") ? " in " + file + ":" + f.get("kernel_line") : "")
            + ": "
            + hint
            + " The CUDA context is unusable afterwards; later errors are consequences.",
        steps);
  }
}
