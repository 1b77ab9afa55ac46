package dev.cudawatch.diagnosis.catalog;

/**
 * One status of a CUDA library's enum (library-statuses.yaml): its library, name, number, the
 * message the library prints for it (null when it prints only the name), and its incident class.
 */
public record LibraryStatus(
    String library, String name, int code, String text, String incidentClass, String suspect) {}
