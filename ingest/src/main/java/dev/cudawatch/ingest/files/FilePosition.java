package dev.cudawatch.ingest.files;

/**
 * Where reading one file resumes after a restart.
 *
 * @param path where the file was last seen
 * @param identity the file's device and inode
 * @param sourceId the stream id given to this content when first seen (or after a truncation):
 *     unique over time, so a reused inode or a truncated file never repeats record ids
 * @param position bytes of the file whose lines the broker acknowledged
 * @param headLength bytes fingerprinted at the start of the content (up to 256)
 * @param headHash fingerprint of those bytes: finds the copy that copytruncate made
 */
public record FilePosition(
    String path, String identity, String sourceId, long position, int headLength, long headHash) {}
