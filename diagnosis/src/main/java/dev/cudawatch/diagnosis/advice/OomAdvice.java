package dev.cudawatch.diagnosis.advice;

import static dev.cudawatch.diagnosis.advice.FieldAdvice.num;
import static dev.cudawatch.diagnosis.advice.FieldValues.humanBytes;

import java.util.List;
import java.util.Map;

/**
 * Which cause of an out-of-memory error the allocator's figures point at: a request larger than the
 * card, fragmentation, another process on the GPU, or the job itself holding the memory.
 */
final class OomAdvice implements FieldAdvice {
  static final String MEMORY_SUMMARY =
      "Print torch.cuda.memory_summary() at the failure to see what holds memory.";

  /**
   * What to do next in the framework that printed the error, its own memory report first: a JAX or
   * llama.cpp OOM gets no PyTorch advice. Keyed by the incident's {@code framework} field.
   */
  private static final Map<String, List<String>> FRAMEWORK_STEPS =
      Map.ofEntries(
          Map.entry("pytorch", List.of(MEMORY_SUMMARY)),
          Map.entry(
              "tensorflow",
              List.of(
                  "Set TF_FORCE_GPU_ALLOW_GROWTH=true (or tf.config.experimental.set_memory_growth) so TensorFlow does not reserve the whole GPU, and read the BFC allocator's chunk summary above the error.")),
          Map.entry(
              "jax",
              List.of(
                  "Read the BufferAssignment stats and peak buffers above the error; save a profile with jax.profiler.save_device_memory_profile().",
                  "Lower XLA_PYTHON_CLIENT_MEM_FRACTION when other processes share the GPU, or set XLA_PYTHON_CLIENT_PREALLOCATE=false.")),
          Map.entry(
              "llama.cpp",
              List.of(
                  "Offload fewer layers (--n-gpu-layers), shrink the context (-c) or the batch (-b/-ub), or quantize the KV cache (--cache-type-k/--cache-type-v q8_0).",
                  "Split the model across GPUs (--tensor-split) and check with nvidia-smi that no other process holds the GPU.")),
          Map.entry(
              "vllm",
              List.of(
                  "Raise --gpu-memory-utilization, or lower --max-model-len / --max-num-seqs so the KV cache fits; use tensor parallelism for a model that barely fits.",
                  "Check with nvidia-smi that no other process holds the GPU: vLLM sizes its cache from the memory free at start-up.")),
          Map.entry(
              "sglang",
              List.of(
                  "At start-up (KV pool does not fit) raise --mem-fraction-static; during serving lower it, or lower --chunked-prefill-size and --max-running-requests.",
                  "Use tensor parallelism (--tp) for a model that barely fits.")),
          Map.entry(
              "tgi",
              List.of(
                  "Lower --max-batch-prefill-tokens and --max-batch-total-tokens, or shard the model (--num-shard).")),
          Map.entry(
              "onnxruntime",
              List.of(
                  "Set the CUDA provider's arena_extend_strategy to kSameAsRequested and a gpu_mem_limit; set cudnn_conv_algo_search to HEURISTIC to avoid large workspaces.",
                  "Bound the input shapes (batch, sequence length, image size): the arena grows with the largest input seen.")),
          Map.entry(
              "tensorrt",
              List.of(
                  "Lower the workspace / memory pool limit (setMemoryPoolLimit, trtexec --memPoolSize) and the optimization profile's max shapes, then rebuild the engine.",
                  "Check with nvidia-smi that no other process holds the GPU while the engine builds or deserializes.")),
          Map.entry(
              "tensorrt-llm",
              List.of(
                  "Rebuild the engine with a smaller max_batch_size / max_num_tokens / max_input_len, or lower the KV cache's free_gpu_memory_fraction.",
                  "Use more tensor-parallel ranks for a model that barely fits.")),
          Map.entry(
              "paddle",
              List.of(
                  "Reduce the batch size; check FLAGS_fraction_of_gpu_memory_to_use and use FLAGS_allocator_strategy=auto_growth.",
                  "Run paddle.utils.run_check() and nvidia-smi to make sure no other process uses the GPU.")),
          Map.entry(
              "mxnet",
              List.of(
                  "Reduce the batch size; set MXNET_GPU_MEM_POOL_TYPE=Round to limit the pool's fragmentation.")),
          Map.entry(
              "cupy",
              List.of(
                  "Free cached blocks with cupy.get_default_memory_pool().free_all_blocks() and cap the pool with set_limit(); check the pool's used_bytes()/total_bytes().")),
          Map.entry(
              "rmm",
              List.of(
                  "Raise the RMM pool's maximum_pool_size or use managed memory; with Dask, set device_memory_limit so workers spill before the pool is full.")),
          Map.entry(
              "numba",
              List.of(
                  "Free device arrays you no longer need (del, numba.cuda.current_context().deallocations.clear()) and transfer in chunks.")),
          Map.entry(
              "cuda",
              List.of(
                  "Check cudaMemGetInfo before the allocation and handle cudaErrorMemoryAllocation; run compute-sanitizer --leak-check full to find leaked allocations.")));

  /** Any other framework, or none known: what holds the GPU, seen from outside the process. */
  private static final String WHO_HOLDS_MEMORY =
      "Check with nvidia-smi what holds the GPU's memory (this job, another process, a leftover one) and the framework's own memory report.";

  /** The next steps of the framework that printed the error, after the class's general ones. */
  static List<String> frameworkSteps(Map<String, Object> f) {
    return FRAMEWORK_STEPS.getOrDefault(
        String.valueOf(f.get("framework")), List.of(WHO_HOLDS_MEMORY));
  }

  /** The framework's way to see what holds memory, closing a figure-specific advice. */
  private static String inspect(Map<String, Object> f) {
    return frameworkSteps(f).get(0);
  }

  @Override
  public Advice advise(Map<String, Object> f) {
    long tried = num(f, "tried_to_allocate_bytes");
    long total = num(f, "total_capacity_bytes");
    long free = num(f, "free_bytes");
    long reservedFree = num(f, "reserved_unallocated_bytes");
    long inUse = num(f, "process_in_use_bytes");
    long allocated = num(f, "allocated_bytes");
    if (tried > 0 && total > 0 && tried > total) {
      return new Advice(
          "The single request ("
              + humanBytes(tried)
              + ") is larger than the whole card ("
              + humanBytes(total)
              + "): no setting of the allocator can satisfy it. The request itself is wrong.",
          List.of(
              "Find the allocation in the traceback and reduce what it allocates: batch size, sequence length, or a tensor sized by mistake (wrong shape, int overflow).",
              "Shard it across GPUs (FSDP, ZeRO, tensor parallelism) or process it in chunks.",
              inspect(f)));
    }
    if (reservedFree > 0
        && total > 0
        && (reservedFree >= total / 20 || (tried > 0 && reservedFree >= tried))) {
      return new Advice(
          "The caching allocator holds "
              + humanBytes(reservedFree)
              + " reserved but unallocated: memory is fragmented, so free blocks exist but none is"
              + " large enough for the "
              + humanBytes(Math.max(tried, 0))
              + " request.",
          List.of(
              "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to let segments grow instead of fragmenting.",
              "Avoid allocation sizes that vary every step (pad dynamic shapes to buckets).",
              inspect(f)));
    }
    if (total > 0 && inUse > 0 && free >= 0 && total - free - inUse > total / 10) {
      return new Advice(
          "About "
              + humanBytes(total - free - inUse)
              + " of the GPU is held outside this process: another process (or a leftover one)"
              + " shares the GPU.",
          List.of(
              "List the GPU's processes with nvidia-smi and fuser -v /dev/nvidia*; kill strays from earlier runs.",
              "Make sure each rank uses its own GPU (torch.cuda.set_device(local_rank)) and the scheduler does not share GPUs.",
              inspect(f)));
    }
    if (allocated > 0 && total > 0 && allocated >= total * 8 / 10) {
      return new Advice(
          "The framework itself holds "
              + humanBytes(allocated)
              + " of "
              + humanBytes(total)
              + ": the model, its activations and optimizer state need more memory than the GPU"
              + " has, or memory grew step after step (a leak) until it ran out.",
          List.of(
              "If memory grew over the run, look for tensors kept alive across steps (loss accumulated without .item(), stored outputs).",
              "Reduce the batch size, use mixed precision (bf16), activation checkpointing, or shard optimizer state (FSDP/ZeRO).",
              inspect(f)));
    }
    return null; // the figures point nowhere in particular: the class's general advice
  }
}
