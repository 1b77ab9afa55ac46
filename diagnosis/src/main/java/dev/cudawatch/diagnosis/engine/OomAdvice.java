package dev.cudawatch.diagnosis.engine;

import static dev.cudawatch.diagnosis.engine.FieldAdvice.num;
import static dev.cudawatch.diagnosis.engine.FieldValues.humanBytes;

import java.util.List;
import java.util.Map;

/**
 * Which cause of an out-of-memory error the allocator's figures point at: a request larger than the
 * card, fragmentation, another process on the GPU, or the job itself holding the memory.
 */
final class OomAdvice implements FieldAdvice {
  static final String MEMORY_SUMMARY =
      "Print torch.cuda.memory_summary() at the failure to see what holds memory.";

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
              MEMORY_SUMMARY));
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
              MEMORY_SUMMARY));
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
              MEMORY_SUMMARY));
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
              MEMORY_SUMMARY));
    }
    return null; // the figures point nowhere in particular: the class's general advice
  }
}
