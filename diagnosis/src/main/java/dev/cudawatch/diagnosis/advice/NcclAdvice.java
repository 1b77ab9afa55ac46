package dev.cudawatch.diagnosis.advice;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What NCCL's result code (and its last error line) says about a NCCL failure. */
final class NcclAdvice implements FieldAdvice {
  @Override
  public Advice advise(Map<String, Object> f) {
    String err = String.valueOf(f.getOrDefault("nccl_error", ""));
    String last = String.valueOf(f.getOrDefault("last_error", ""));
    List<String> steps = new ArrayList<>();
    String why;
    switch (err) {
      case "ncclInvalidUsage" -> {
        why =
            "NCCL was called incorrectly (ncclInvalidUsage): a bug in the program's setup of the process group.";
        if (last.contains("Duplicate GPU")) {
          why += " Two ranks are on the same GPU.";
          steps.add(
              "Give each rank its own GPU: call torch.cuda.set_device(local_rank) before init_process_group, and check CUDA_VISIBLE_DEVICES per rank.");
        }
        steps.add("Rerun with NCCL_DEBUG=WARN to see NCCL's own explanation.");
      }
      case "ncclUnhandledCudaError" -> {
        why =
            "A CUDA call inside NCCL failed (ncclUnhandledCudaError): usually out of memory or an earlier CUDA fault.";
        steps.add(
            "Rerun with NCCL_DEBUG=WARN to see the CUDA error; check memory headroom for NCCL buffers.");
      }
      case "ncclSystemError" -> {
        why =
            "A system call failed inside NCCL (ncclSystemError): shared memory, sockets or InfiniBand.";
        steps.add(
            "In containers, enlarge /dev/shm (--shm-size or --ipc=host); check NCCL_SOCKET_IFNAME and the IB devices.");
        steps.add("Rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET.");
      }
      case "ncclRemoteError" -> {
        why = "A peer failed (ncclRemoteError): a remote process exited or the network failed.";
        steps.add("Read the other ranks' logs for the first failure; check the network links.");
      }
      case "ncclInternalError" -> {
        why =
            "NCCL hit an internal error: a NCCL bug, mismatched NCCL versions across ranks, or a broken fabric.";
        steps.add(
            "Check that every rank uses the same NCCL version; update NCCL; rerun with NCCL_DEBUG=INFO.");
      }
      default -> {
        return null; // an abort or an unnamed error: the class's general advice
      }
    }
    return new Advice(why, steps);
  }
}
