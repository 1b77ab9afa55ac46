package dev.cudawatch.ingest;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.cudawatch.common.config.ConfigException;
import java.util.List;

/**
 * One entry of the agent's {@code files:}: a glob, written as a plain string, or {@code {path:
 * GLOB, format: cri}} for container logs that a CRI runtime (containerd, CRI-O) wrote, whose
 * framing the agent strips (see {@link dev.cudawatch.ingest.framing.CriLineDecoder}).
 *
 * @param path the glob
 * @param format how its files' lines are written
 */
public record FileGlob(String path, Format format) {
  /** How the lines of a followed file are written. */
  public enum Format {
    /** As the program printed them. */
    @JsonProperty("plain")
    PLAIN,
    /** {@code <time> <stdout|stderr> <P|F> <content>}: the kubelet's container log format. */
    @JsonProperty("cri")
    CRI
  }

  @JsonCreator(mode = JsonCreator.Mode.PROPERTIES)
  public FileGlob(@JsonProperty("path") String path, @JsonProperty("format") Format format) {
    if (path == null || path.isBlank()) {
      throw new ConfigException("files: an entry's path must not be empty");
    }
    this.path = path;
    this.format = format == null ? Format.PLAIN : format;
  }

  /** A plain string entry. */
  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static FileGlob of(String path) {
    return new FileGlob(path, Format.PLAIN);
  }

  /** Plain globs. */
  public static List<FileGlob> plain(List<String> globs) {
    return globs == null ? null : globs.stream().map(FileGlob::of).toList();
  }

  /** The globs of {@code files} in {@code format}. */
  public static List<String> paths(List<FileGlob> files, Format format) {
    return files.stream()
        .filter(f -> format == null || f.format() == format)
        .map(FileGlob::path)
        .toList();
  }

  @Override
  public String toString() {
    return format == Format.PLAIN
        ? path
        : path + " (" + format.name().toLowerCase(java.util.Locale.ROOT) + ")";
  }
}
