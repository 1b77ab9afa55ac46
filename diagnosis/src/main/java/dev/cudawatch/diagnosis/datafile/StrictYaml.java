package dev.cudawatch.diagnosis.datafile;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;

/**
 * The diagnosis module's one way of reading its data files (catalogs, the taxonomy): snake_case
 * keys, unknown keys rejected, and every error located at {@code file:line}. Top-level keys are
 * streamed so that each list item keeps the line it starts on.
 */
public final class StrictYaml {
  public static final ObjectMapper MAPPER =
      YAMLMapper.builder(new YAMLFactory())
          .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  /** An item of a list with the place it was read from ({@code file:line}). */
  public record Located<T>(T value, String origin) {}

  /** Reads the value of one top-level key; the parser stands on the value's first token. */
  @FunctionalInterface
  public interface Section {
    void read(JsonParser p, JsonToken first) throws IOException;
  }

  private StrictYaml() {}

  /**
   * Reads a YAML mapping, handing each top-level key to its section; an unknown key is an error
   * naming the known ones.
   */
  public static void read(InputStream in, String file, Map<String, Section> sections) {
    try (JsonParser p = MAPPER.getFactory().createParser(in)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new CatalogException(
            file + ": the top level must be a mapping of " + sections.keySet());
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        JsonToken t = p.nextToken();
        Section s = sections.get(key);
        if (s == null) {
          throw new CatalogException(
              at(file, p.currentLocation())
                  + "unknown key '"
                  + key
                  + "' (known: "
                  + String.join(", ", sections.keySet())
                  + ")");
        }
        s.read(p, t);
      }
    } catch (JsonProcessingException e) {
      throw new CatalogException(
          at(file, e.getLocation()) + "not valid YAML: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new CatalogException(file + ": cannot read: " + e.getMessage(), e);
    }
  }

  /** Reads a list of {@code type} items, each located at the line it starts on. */
  public static <T> void readList(
      JsonParser p, JsonToken first, String file, String key, Class<T> type, List<Located<T>> out)
      throws IOException {
    if (first != JsonToken.START_ARRAY) {
      throw new CatalogException(at(file, p.currentLocation()) + "'" + key + "' must be a list");
    }
    while (p.nextToken() == JsonToken.START_OBJECT) {
      JsonLocation start = p.currentLocation();
      try {
        T item = MAPPER.readValue(p, type);
        out.add(new Located<>(item, at(file, start).replaceAll(": $", "")));
      } catch (UnrecognizedPropertyException e) {
        throw new CatalogException(
            at(file, start)
                + "unknown key '"
                + e.getPropertyName()
                + "' (known: "
                + e.getKnownPropertyIds()
                + ")",
            e);
      } catch (JsonProcessingException e) {
        JsonLocation loc = e.getLocation() != null ? e.getLocation() : start;
        throw new CatalogException(at(file, loc) + e.getOriginalMessage(), e);
      }
    }
  }

  /** Reads the value at the parser as {@code type}. */
  public static <T> T readValue(JsonParser p, String file, Class<T> type) throws IOException {
    JsonLocation start = p.currentLocation();
    try {
      return MAPPER.readValue(p, type);
    } catch (JsonProcessingException e) {
      JsonLocation loc = e.getLocation() != null ? e.getLocation() : start;
      throw new CatalogException(at(file, loc) + e.getOriginalMessage(), e);
    }
  }

  /** {@code file:line: } for messages. */
  public static String at(String file, JsonLocation loc) {
    return loc == null ? file + ": " : file + ":" + loc.getLineNr() + ": ";
  }
}
