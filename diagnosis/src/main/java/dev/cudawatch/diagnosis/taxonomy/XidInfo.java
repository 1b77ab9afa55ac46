package dev.cudawatch.diagnosis.taxonomy;

/**
 * One entry of NVIDIA's Xid catalog.
 *
 * @param xid the code
 * @param mnemonic NVIDIA's name for it
 * @param meaning what it means
 * @param verdict who it blames
 * @param severity the severity of a {@code gpu_xid} incident of this code
 * @param recovery NVIDIA's immediate resolution bucket (RESTART_APP, RESET_GPU, ...)
 * @param action what to do; null takes the recovery bucket's text
 * @param causesLater later Xids on the GPU (43, 45, 63, 94, 154, ...) are often caused by this one
 */
public record XidInfo(
    int xid,
    String mnemonic,
    String meaning,
    XidVerdict verdict,
    String severity,
    String recovery,
    String action,
    boolean causesLater) {}
