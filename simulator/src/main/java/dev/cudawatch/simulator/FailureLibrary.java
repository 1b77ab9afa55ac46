package dev.cudawatch.simulator;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What each taxonomy class looks like in a job's output: the lines a rank writes when it fails that
 * way, in the wordings of PyTorch, CUDA, cuBLAS/cuDNN, NCCL and the kernel. {@code %r} is replaced
 * by the rank, {@code %g} by the device ordinal the rank uses (its own numbering, which is the
 * physical index only when it sees every GPU), {@code %n} by a random number, {@code %f} by the
 * job's script line.
 */
final class FailureLibrary {
  private FailureLibrary() {}

  private static final String TB =
      "Traceback (most recent call last):\n  File \"/workspace/train.py\", line %f, in <module>\n    loss = model(batch).loss\n";

  /** Class -> the variants of its lines; each variant is one failure as a rank writes it. */
  static final Map<String, List<String>> RANK_FAILURES = new LinkedHashMap<>();

  /** Classes that appear in the kernel log, not in a rank's output. */
  static final Map<String, List<String>> KERNEL_FAILURES = new LinkedHashMap<>();

  static {
    RANK_FAILURES.put(
        "cuda_oom",
        List.of(
            TB
                + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU %g has a total capacity of 79.19 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this process has 78.11 GiB memory in use. Of the allocated memory 70.02 GiB is allocated by PyTorch, and 6.55 GiB is reserved by PyTorch but unallocated.",
            "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."));
    RANK_FAILURES.put(
        "illegal_memory_access",
        List.of(
            TB
                + "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
            "terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: an illegal memory access was encountered"));
    RANK_FAILURES.put(
        "misaligned_address",
        List.of(
            "CUDA error: misaligned address (cudaErrorMisalignedAddress, 716) at kernels.cu:%n"));
    RANK_FAILURES.put(
        "invalid_address_space",
        List.of("CUDA error 717: operation not supported on global/shared address space"));
    RANK_FAILURES.put(
        "kernel_exception", List.of(TB + "RuntimeError: CUDA error: unspecified launch failure"));
    RANK_FAILURES.put(
        "device_assert",
        List.of(
            "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [%n,0,0], thread: [0,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.\n"
                + TB
                + "RuntimeError: CUDA error: device-side assert triggered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."));
    RANK_FAILURES.put(
        "launch_config_error",
        List.of(TB + "RuntimeError: CUDA error: too many resources requested for launch"));
    RANK_FAILURES.put(
        "no_kernel_image",
        List.of(
            TB
                + "RuntimeError: CUDA error: no kernel image is available for execution on the device"));
    RANK_FAILURES.put(
        "driver_error",
        List.of(
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver."));
    RANK_FAILURES.put(
        "cuda_error",
        List.of("CUDA error: invalid argument (cudaErrorInvalidValue, 1) at cudaMemcpyAsync"));
    RANK_FAILURES.put(
        "cublas_error",
        List.of(
            TB
                + "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"));
    RANK_FAILURES.put(
        "cudnn_error", List.of(TB + "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"));
    RANK_FAILURES.put(
        "cuda_library_error", List.of(TB + "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR"));
    RANK_FAILURES.put(
        "nccl_timeout",
        List.of(
            "[rank%r]:[E1122 03:%n:00.000000000 ProcessGroupNCCL.cpp:632] [Rank %r] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%n, OpType=ALLREDUCE, NumelIn=4196352, NumelOut=4196352, Timeout(ms)=600000) ran for 600042 milliseconds before timing out."));
    RANK_FAILURES.put(
        "nccl_error",
        List.of(
            "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3356, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error."));
    RANK_FAILURES.put(
        "ecc_error", List.of(TB + "RuntimeError: CUDA error: uncorrectable ECC error encountered"));
    RANK_FAILURES.put(
        "gpu_lost",
        List.of(
            "Unable to determine the device handle for GPU0000:%n:00.0: GPU is lost.  Reboot the system to recover this GPU"));
    RANK_FAILURES.put(
        "internal_assert",
        List.of(
            TB
                + "RuntimeError: r.is_ok() INTERNAL ASSERT FAILED at \"/pytorch/c10/cuda/CUDACachingAllocator.cpp\":%n, please report a bug to PyTorch."));
    RANK_FAILURES.put(
        "sanitizer_report",
        List.of(
            "========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 bytes\n=========     at scatter_kernel(float *, int)+0x1d0 in /src/scatter.cu:%n\n=========     by thread (%n,0,0) in block (0,0,0)\n=========     Address 0x7f1c00000400 is out of bounds\n========= ERROR SUMMARY: 1 error"));

    KERNEL_FAILURES.put(
        "gpu_xid",
        List.of(
            "[%n.123456] NVRM: Xid (PCI:0000:%p:00): 79, pid=0, name=python3, GPU has fallen off the bus.",
            "[%n.123456] NVRM: Xid (PCI:0000:%p:00): 48, pid=%n, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."));
    KERNEL_FAILURES.put(
        "host_oom",
        List.of(
            "[%n.654321] Out of memory: Killed process %n (python3) total-vm:912345678kB, anon-rss:123456789kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:456789kB oom_score_adj:0"));
  }

  /** The lines of one failure of {@code cls}, filled in for a rank and GPU. */
  static List<String> lines(String cls, int rank, int gpu, String pciBus, SplittableRandom r) {
    List<String> variants =
        RANK_FAILURES.containsKey(cls) ? RANK_FAILURES.get(cls) : KERNEL_FAILURES.get(cls);
    String t = variants.get(r.nextInt(variants.size()));
    t =
        t.replace("%r", String.valueOf(rank))
            .replace("%g", String.valueOf(gpu))
            .replace("%p", pciBus)
            .replace("%f", String.valueOf(100 + r.nextInt(300)));
    StringBuilder out = new StringBuilder();
    int i;
    while ((i = t.indexOf("%n")) >= 0) {
      out.append(t, 0, i).append(10 + r.nextInt(89));
      t = t.substring(i + 2);
    }
    out.append(t);
    return List.of(out.toString().split("\n"));
  }
}
