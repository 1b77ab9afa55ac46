package dev.cudawatch.diagnosis.engine;

/**
 * A log line made comparable: carriage-return progress collapsed to its last state, ANSI escapes
 * removed, and a launcher's rank prefix ({@code [rank3]:}) taken off and kept as {@code rank}.
 */
public record NormalizedLine(String text, Integer rank) {}
