package dev.cudawatch.diagnosis.engine;

import dev.cudawatch.diagnosis.catalog.XidTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a person on call needs to know about an incident, specific to its fields: the knowledge of
 * the seed documents (why the error happens, what it is usually a symptom of, what to do next).
 */
public final class Advisor {
  private final XidTable xids;

  public Advisor(XidTable xids) {
    this.xids = xids;
  }

  public Advice advise(String cls, Map<String, Object> f) {
    List<String> steps = new ArrayList<>();
    String why =
        switch (cls) {
          case "cuda_oom" -> oom(f, steps);
          case "illegal_memory_access" -> {
            steps.add(
                "Rerun with CUDA_LAUNCH_BLOCKING=1 so the error is raised at the kernel that faulted, not at a later call.");
            steps.add(
                "Run under compute-sanitizer --tool memcheck to get the kernel, thread and address of the bad access.");
            steps.add(
                "Check custom kernels (CUDA extensions, Triton) for out-of-range indices, missing bounds masks and wrong strides.");
            steps.add(
                "Look at the node's kernel log: Xid 13/31/43 mean an application fault (the GPU is healthy); Xid 48/94/95 mean a hardware memory error: drain the GPU.");
            yield "A kernel read or wrote an address outside any allocation it may use. CUDA errors are sticky and "
                + "asynchronous: the error surfaces at the next synchronising call, and every CUDA call after it "
                + "fails too, so the first error in the log is the root and the line it points to may not be the culprit.";
          }
          case "misaligned_address" -> {
            steps.add(
                "Check pointer casts and vectorised loads (float4, int4, half2) on offsets that are not multiples of the access width.");
            steps.add(
                "Run under compute-sanitizer --tool memcheck to find the kernel and the address.");
            yield "A kernel loaded or stored a value at an address not aligned to the value's size, typically a "
                + "reinterpret_cast of a byte offset or a view of a tensor whose storage offset breaks alignment.";
          }
          case "invalid_address_space" -> {
            steps.add(
                "Look for generic pointers used with a space-specific instruction (shared-memory atomics through a global pointer, cvta misuse) in custom kernels or inline PTX.");
            steps.add("Run under compute-sanitizer --tool memcheck to find the kernel.");
            yield "An instruction that works on one address space (global or shared) was given an address of another. "
                + "It is a bug in the kernel's code, usually inline PTX or a pointer passed to the wrong kind of memory.";
          }
          case "kernel_exception" -> {
            steps.add(
                "Rerun with CUDA_LAUNCH_BLOCKING=1 and under compute-sanitizer --tool memcheck: an unspecified launch failure is most often an out-of-bounds access.");
            steps.add(
                "Look for an earlier error in the same stream: this failure is often its consequence.");
            steps.add(
                "For 'launch timed out', the GPU runs a display watchdog: use a compute-only GPU or split the kernel.");
            yield "A kernel died while running (unspecified launch failure, illegal instruction, invalid program counter, "
                + "hardware stack error or a watchdog timeout). The CUDA context is unusable afterwards, so every later call fails.";
          }
          case "device_assert" -> assertAdvice(f, steps);
          case "launch_config_error" -> {
            steps.add(
                "Check the launch configuration: at most 1024 threads per block, grid limits, and the kernel's shared memory and registers per thread.");
            steps.add(
                "For Triton, lower BLOCK sizes, num_warps or num_stages so the kernel fits the GPU's shared memory.");
            yield "The kernel could not be launched as asked: the block is too large, it needs more shared memory or "
                + "registers than the GPU has, or the grid or cluster shape is invalid for this device.";
          }
          case "no_kernel_image" -> {
            steps.add(
                "Compare the GPU's compute capability (nvidia-smi --query-gpu=compute_cap --format=csv) with the build's architectures (torch.cuda.get_arch_list(), TORCH_CUDA_ARCH_LIST, nvcc -gencode).");
            steps.add(
                "Install a framework build for this GPU and CUDA version, or rebuild extensions with the right -gencode (include PTX for forward compatibility).");
            steps.add(
                "PTX compiled by a newer toolkit than the driver supports needs a driver upgrade.");
            yield "The binary holds no machine code (SASS) for this GPU's architecture and no PTX the driver can JIT-compile: "
                + "the framework or extension was built for other GPUs, or with a newer toolkit than the driver.";
          }
          case "driver_error" -> {
            steps.add(
                "Run nvidia-smi on the node: if it fails, the driver is not loaded or the GPU is gone.");
            steps.add(
                "Compare the driver's CUDA version (nvidia-smi header) with the runtime the job uses (torch.version.cuda, nvcc --version); upgrade the driver or use a matching build.");
            steps.add(
                "Check CUDA_VISIBLE_DEVICES, the container's GPU access (--gpus, the NVIDIA container toolkit) and the GPU's compute mode (exclusive-process GPUs are busy).");
            steps.add(
                "On NVSwitch systems, 'system not yet initialized' means the fabric manager is not running: start nvidia-fabricmanager.");
            yield "The job could not use the GPU at all: no driver, a driver older than the CUDA runtime, no visible device, "
                + "or a device busy or in a bad state. It is an environment problem, not a bug in the job's code.";
          }
          case "cuda_error" -> {
            steps.add(
                "Read the call that returned the error and check its arguments (sizes, pointers, device, stream).");
            steps.add(
                "Rerun with CUDA_LAUNCH_BLOCKING=1: asynchronous errors from earlier kernels are reported at later calls.");
            yield "A CUDA runtime or driver call returned an error"
                + named(f)
                + ". Unless a kernel faulted earlier, it "
                + "points at the arguments of that call.";
          }
          case "cublas_error" -> {
            steps.add(
                "Look above this error for the first failure in the stream: an earlier illegal access or OOM makes every later cuBLAS call fail.");
            steps.add(
                "CUBLAS_STATUS_ALLOC_FAILED or a failing cublasCreate means the GPU was out of memory: treat it as an OOM.");
            steps.add(
                "Rerun with CUDA_LAUNCH_BLOCKING=1 to see which kernel actually failed; check matmul shapes and dtypes.");
            yield "A cuBLAS call failed"
                + status(f, "cublas_status")
                + ". cuBLAS failures are usually a symptom: a preceding "
                + "kernel corrupted memory or the context, or memory ran out, and cuBLAS is simply the next library to touch the GPU.";
          }
          case "cudnn_error" -> {
            steps.add(
                "Look above for an earlier failure or OOM: cuDNN errors after them are consequences.");
            steps.add(
                "CUDNN_STATUS_NOT_INITIALIZED often means no memory was left to create the handle, or a cuDNN/driver mismatch.");
            steps.add(
                "To isolate it, set torch.backends.cudnn.enabled=False (or benchmark=False) and check input shapes and dtypes.");
            yield "A cuDNN call failed"
                + status(f, "cudnn_status")
                + ". It is often the consequence of an earlier fault or of "
                + "low memory, otherwise an unsupported configuration or a cuDNN version that does not match the framework.";
          }
          case "cuda_library_error" -> {
            steps.add(
                "Look above for an earlier CUDA failure or OOM: library errors after them are consequences.");
            steps.add(
                "Check that the library version matches the framework's CUDA version, and the call's sizes and layouts.");
            yield "A CUDA math or compiler library call failed" + status(f, "library_status") + ".";
          }
          case "nccl_timeout" -> {
            steps.add(
                "Find the rank that did not join: read every rank's log for an earlier error (OOM, exception, exit) — the timeout is a symptom.");
            steps.add(
                "Check that all ranks issue the same collectives in the same order with the same sizes (TORCH_DISTRIBUTED_DEBUG=DETAIL), with no rank-dependent branch around them.");
            steps.add(
                "Enable the flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE) and NCCL_DEBUG=INFO to see which collective each rank was in.");
            steps.add(
                "Rule out a slow rank (data loading, checkpoint saving on rank 0) or the network before raising the timeout.");
            yield "A collective"
                + (f.containsKey("op_type") ? " (" + f.get("op_type") + ")" : "")
                + " did not complete within "
                + (f.containsKey("timeout_ms") ? f.get("timeout_ms") + " ms" : "its timeout")
                + ": at least one peer rank "
                + "never reached it, because it crashed, hung, fell behind, or the network stalled. The watchdog then "
                + "aborts the communicator and takes the process down.";
          }
          case "nccl_error" -> ncclAdvice(f, steps);
          case "gpu_xid" -> xidAdvice(f, steps);
          case "ecc_error" -> {
            steps.add("Drain the node and check nvidia-smi -q -d ECC,ROW_REMAPPER on that GPU.");
            steps.add(
                "Reset the GPU (nvidia-smi -r) to apply row remapping; replace it if uncorrectable errors recur.");
            yield "The GPU's memory returned data it could not correct. This is a hardware fault, not a bug in the job: restart the job on another GPU.";
          }
          case "gpu_lost" -> {
            steps.add("Drain the node: the GPU no longer answers and needs a reboot.");
            steps.add(
                "Check the kernel log for Xid 79, power and thermals, and PCIe errors; replace the GPU if it recurs.");
            yield "The GPU fell off the bus or stopped answering the driver (typically Xid 79). Nothing on it can run until the node is rebooted.";
          }
          case "internal_assert" -> {
            steps.add("Update the framework: internal asserts are bugs, often already fixed.");
            steps.add(
                "Search the framework's issue tracker for the assert's location, then report a minimal reproduction.");
            yield "An invariant inside the framework failed. The framework is at fault, even if an unusual input triggered it.";
          }
          case "sanitizer_report" -> {
            steps.add(
                "Fix the first reported access: the kernel, thread and block, and how far past the allocation it went are in the report.");
            steps.add("Build with -lineinfo to get source lines; add --show-backtrace device.");
            yield "compute-sanitizer caught a kernel making invalid memory accesses"
                + (f.containsKey("kernel") ? " in " + f.get("kernel") : "")
                + ". Every CUDA error after the first report is its consequence.";
          }
          case "host_oom" -> {
            steps.add(
                "Lower DataLoader num_workers or prefetch_factor; avoid Python lists of objects in Dataset (copy-on-read makes each worker duplicate them).");
            steps.add(
                "Check the job's memory request and cgroup limit against its peak RSS; raise it if the job really needs it.");
            yield "The host ran out of RAM and the kernel's OOM killer (or the cgroup limit) killed a process. GPU memory is not involved.";
          }
          case "memory_leak" -> {
            steps.add(
                "Look for tensors kept alive across steps: losses accumulated without .item(), outputs stored in lists, growing caches.");
            steps.add(
                "Record the allocator history (torch.cuda.memory._record_memory_history) and inspect a snapshot.");
            yield "Device memory grows steadily"
                + (f.containsKey("growth_bytes_per_second")
                    ? " at "
                        + FieldValues.humanBytes(
                            ((Number) f.get("growth_bytes_per_second")).longValue())
                        + "/s"
                    : "")
                + (f.containsKey("predicted_seconds_to_full")
                    ? " and will fill the GPU in about " + f.get("predicted_seconds_to_full") + " s"
                    : "")
                + ": the job will die of an out-of-memory error unless something is freed.";
          }
          default -> "";
        };
    return new Advice(why, List.copyOf(steps));
  }

  private static String oom(Map<String, Object> f, List<String> steps) {
    long tried = num(f, "tried_to_allocate_bytes");
    long total = num(f, "total_capacity_bytes");
    long free = num(f, "free_bytes");
    long reservedFree = num(f, "reserved_unallocated_bytes");
    long inUse = num(f, "process_in_use_bytes");
    long allocated = num(f, "allocated_bytes");
    String why;
    if (tried > 0 && total > 0 && tried > total) {
      why =
          "The single request ("
              + FieldValues.humanBytes(tried)
              + ") is larger than the whole card ("
              + FieldValues.humanBytes(total)
              + "): no setting of the allocator can satisfy it. The request itself is wrong.";
      steps.add(
          "Find the allocation in the traceback and reduce what it allocates: batch size, sequence length, or a tensor sized by mistake (wrong shape, int overflow).");
      steps.add("Shard it across GPUs (FSDP, ZeRO, tensor parallelism) or process it in chunks.");
    } else if (reservedFree > 0
        && total > 0
        && (reservedFree >= total / 20 || (tried > 0 && reservedFree >= tried))) {
      why =
          "The caching allocator holds "
              + FieldValues.humanBytes(reservedFree)
              + " reserved but unallocated: memory is "
              + "fragmented, so free blocks exist but none is large enough for the "
              + FieldValues.humanBytes(Math.max(tried, 0))
              + " request.";
      steps.add(
          "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to let segments grow instead of fragmenting.");
      steps.add("Avoid allocation sizes that vary every step (pad dynamic shapes to buckets).");
    } else if (total > 0 && inUse > 0 && free >= 0 && total - free - inUse > total / 10) {
      long other = total - free - inUse;
      why =
          "About "
              + FieldValues.humanBytes(other)
              + " of the GPU is held outside this process: another process (or a "
              + "leftover one) shares the GPU.";
      steps.add(
          "List the GPU's processes with nvidia-smi and fuser -v /dev/nvidia*; kill strays from earlier runs.");
      steps.add(
          "Make sure each rank uses its own GPU (torch.cuda.set_device(local_rank)) and the scheduler does not share GPUs.");
    } else if (allocated > 0 && total > 0 && allocated >= total * 8 / 10) {
      why =
          "The framework itself holds "
              + FieldValues.humanBytes(allocated)
              + " of "
              + FieldValues.humanBytes(total)
              + ": the model, its activations and optimizer state need more memory than the GPU has, or memory grew step "
              + "after step (a leak) until it ran out.";
      steps.add(
          "If memory grew over the run, look for tensors kept alive across steps (loss accumulated without .item(), stored outputs).");
      steps.add(
          "Reduce the batch size, use mixed precision (bf16), activation checkpointing, or shard optimizer state (FSDP/ZeRO).");
    } else {
      why =
          "A device memory allocation failed: the job needs more GPU memory than is free at that moment.";
      steps.add(
          "Reduce the batch size or sequence length; use mixed precision and activation checkpointing.");
    }
    steps.add("Print torch.cuda.memory_summary() at the failure to see what holds memory.");
    return why;
  }

  private static String assertAdvice(Map<String, Object> f, List<String> steps) {
    String file = String.valueOf(f.getOrDefault("kernel_file", ""));
    String hint;
    if (file.contains("Index") || file.contains("ScatterGather") || file.contains("Embedding")) {
      hint =
          "an index out of range: an index tensor (embedding ids, gather/scatter/index_select indices) holds a value "
              + "outside the size of the dimension it indexes.";
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
    return "A device-side assert fired"
        + (f.containsKey("kernel_file") ? " in " + file + ":" + f.get("kernel_line") : "")
        + ": "
        + hint
        + " The CUDA context is unusable afterwards; later errors are consequences.";
  }

  private static String ncclAdvice(Map<String, Object> f, List<String> steps) {
    String err = String.valueOf(f.getOrDefault("nccl_error", ""));
    String last = String.valueOf(f.getOrDefault("last_error", ""));
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
        why =
            "A NCCL operation failed or the communicator was aborted. An abort is usually the consequence of a "
                + "timeout or a failure elsewhere.";
        steps.add(
            "Look for the first failure on every rank (timeouts, OOMs, exceptions) before this one.");
        steps.add("Rerun with NCCL_DEBUG=WARN (or INFO) to see NCCL's reason.");
      }
    }
    return why;
  }

  private String xidAdvice(Map<String, Object> f, List<String> steps) {
    Object x = f.get("xid");
    if (!(x instanceof Number n)) {
      steps.add("Look the Xid up in NVIDIA's Xid catalog.");
      return "The NVIDIA driver reported an Xid error.";
    }
    return xids.get(n.intValue())
        .map(
            e -> {
              steps.add(e.action());
              return "Xid " + e.xid() + ": " + e.meaning() + ". Suspect: " + e.suspect() + ".";
            })
        .orElseGet(
            () -> {
              steps.add(
                  "Look the code up in NVIDIA's Xid catalog and collect nvidia-bug-report.sh.");
              return "The NVIDIA driver reported Xid " + n + ".";
            });
  }

  private static long num(Map<String, Object> f, String k) {
    return f.get(k) instanceof Number n ? n.longValue() : -1;
  }

  private static String named(Map<String, Object> f) {
    return f.containsKey("cuda_error_name") ? " (" + f.get("cuda_error_name") + ")" : "";
  }

  private static String status(Map<String, Object> f, String k) {
    return f.containsKey(k) ? " with " + f.get(k) : "";
  }
}
