package dev.cudawatch.common.wire;

/** A record on the wire that this build cannot read; the message says why. */
public final class WireFormatException extends Exception {
  private static final long serialVersionUID = 1L;

  public WireFormatException(String reason) {
    super(reason);
  }

  public WireFormatException(String reason, Throwable cause) {
    super(reason, cause);
  }
}
