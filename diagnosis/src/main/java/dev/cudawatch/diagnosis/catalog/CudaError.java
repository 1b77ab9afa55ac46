package dev.cudawatch.diagnosis.catalog;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One CUDA error: its number, runtime ({@code cudaError*}) and driver ({@code CUDA_ERROR_*}) names,
 * the text {@code cudaGetErrorString} prints, and the incident class it maps to.
 */
public record CudaError(
    int code,
    String runtime,
    String driver,
    String text,
    @JsonProperty("class") String incidentClass,
    String suspect,
    String severity,
    boolean distinctive) {

  public CudaError {
    incidentClass = incidentClass == null ? "cuda_error" : incidentClass;
  }

  /** The name to report: the runtime name when there is one. */
  public String name() {
    return runtime != null ? runtime : driver;
  }
}
