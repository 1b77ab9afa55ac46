package dev.cudawatch.diagnosis.advice;

import java.util.Map;

/** Advice computed from an incident's fields, for the classes whose advice needs logic. */
interface FieldAdvice {
  /** The advice for these fields, or null when there is nothing more specific than the class's. */
  Advice advise(Map<String, Object> fields);

  static long num(Map<String, Object> f, String k) {
    return f.get(k) instanceof Number n ? n.longValue() : -1;
  }
}
