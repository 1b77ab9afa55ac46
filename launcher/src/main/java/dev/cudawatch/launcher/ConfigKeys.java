package dev.cudawatch.launcher;

import java.lang.reflect.RecordComponent;
import java.util.LinkedHashSet;
import java.util.Set;

/** The YAML keys of a typed configuration record: its components in snake_case. */
public final class ConfigKeys {
  private ConfigKeys() {}

  public static Set<String> topLevel(Class<?> type) {
    Set<String> keys = new LinkedHashSet<>();
    RecordComponent[] components = type.getRecordComponents();
    if (components != null) {
      for (RecordComponent c : components) {
        keys.add(snake(c.getName()));
      }
    }
    return keys;
  }

  /** {@code maxIncidentsBytes} to {@code max_incidents_bytes}, as Jackson's SNAKE_CASE does. */
  static String snake(String camel) {
    StringBuilder sb = new StringBuilder();
    for (char c : camel.toCharArray()) {
      if (Character.isUpperCase(c)) {
        sb.append('_').append(Character.toLowerCase(c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
