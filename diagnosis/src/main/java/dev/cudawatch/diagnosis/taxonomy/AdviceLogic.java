package dev.cudawatch.diagnosis.taxonomy;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Advice that needs logic over the fields (arithmetic, lookups), implemented in Java; a class names
 * it with {@code advice:} in taxonomy.yaml.
 */
public enum AdviceLogic {
  /** Which of the OOM causes the allocator's figures point at ({@code OomAdvice}). */
  @JsonProperty("oom")
  OOM,
  /** What the NCCL result code means ({@code NcclAdvice}). */
  @JsonProperty("nccl")
  NCCL,
  /** What the asserting kernel's file says about the bad input ({@code AssertAdvice}). */
  @JsonProperty("assert")
  ASSERT,
  /** The Xid's entry of the Xid catalog ({@code XidAdvice}). */
  @JsonProperty("xid")
  XID
}
