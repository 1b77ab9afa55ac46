package dev.cudawatch.diagnosis.datafile;

/**
 * A data file (a catalog, the taxonomy) that cannot be loaded; the message gives the file, the line
 * and the reason.
 */
public final class CatalogException extends dev.cudawatch.common.config.ConfigException {
  private static final long serialVersionUID = 1L;

  public CatalogException(String message) {
    super(message);
  }

  public CatalogException(String message, Throwable cause) {
    super(message, cause);
  }
}
