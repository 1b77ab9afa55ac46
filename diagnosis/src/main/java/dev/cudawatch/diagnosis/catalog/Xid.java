package dev.cudawatch.diagnosis.catalog;

/** One entry of NVIDIA's Xid catalog: what the code means, who is suspect, what to do. */
public record Xid(int xid, String suspect, String severity, String meaning, String action) {}
