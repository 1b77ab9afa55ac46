package dev.cudawatch.diagnosis.engine;

/**
 * Where a stream's lines come from.
 *
 * @param host node, or null offline
 * @param job job id, or null
 * @param source path or name of the stream, also the {@code file} of {@code classify --json}
 */
public record StreamContext(String host, String job, String source)
    implements java.io.Serializable {}
