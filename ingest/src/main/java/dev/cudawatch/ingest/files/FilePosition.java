package dev.cudawatch.ingest.files;

/**
 * Where reading a file resumes after a restart.
 *
 * @param identity the file's device and inode when the position was taken
 * @param sourceId the stream id given to this file when it was first seen (or last truncated):
 *     unique over time, so a reused inode or a truncated file never repeats record ids
 * @param position bytes of the file whose lines the broker acknowledged
 */
public record FilePosition(String identity, String sourceId, long position) {}
