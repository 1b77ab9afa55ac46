package dev.cudawatch.diagnosis.catalog;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads catalog YAML (the built-in resource, then user files) into a {@link Catalog}. A bad
 * signature fails the load with its file, line and reason: a catalog is code, and code that does
 * not compile does not run.
 */
public final class CatalogLoader {
  /** Taxonomy classes of shared/spec/TAXONOMY.md. */
  public static final Set<String> CLASSES =
      Set.of(
          "cuda_oom",
          "illegal_memory_access",
          "misaligned_address",
          "invalid_address_space",
          "kernel_exception",
          "device_assert",
          "launch_config_error",
          "no_kernel_image",
          "driver_error",
          "cuda_error",
          "cublas_error",
          "cudnn_error",
          "cuda_library_error",
          "nccl_timeout",
          "nccl_error",
          "gpu_xid",
          "ecc_error",
          "gpu_lost",
          "internal_assert",
          "sanitizer_report",
          "host_oom",
          "memory_leak");

  private static final Set<String> SEVERITIES = Set.of("critical", "error", "warning", "info");
  private static final Set<String> SUSPECTS =
      Set.of("application", "hardware", "environment", "infrastructure", "framework", "driver");
  private static final String DISTINCTIVE = "@distinctive";

  private static final ObjectMapper YAML =
      YAMLMapper.builder(new YAMLFactory())
          .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  private record Located(SignatureSpec spec, String origin) {}

  private record Tables(List<CudaError> errors, List<Xid> xids) {}

  public Catalog load(List<Path> extraFiles) {
    Map<String, byte[]> texts = new java.util.LinkedHashMap<>();
    for (Path p : extraFiles) {
      try {
        texts.put(p.toString(), Files.readAllBytes(p));
      } catch (IOException e) {
        throw new CatalogException(p + ": cannot read: " + e.getMessage(), e);
      }
    }
    return loadTexts(texts);
  }

  /**
   * Loads the built-in catalog plus user catalogs given as (name, YAML bytes), e.g. shipped in a
   * job graph.
   */
  public Catalog loadTexts(Map<String, byte[]> extra) {
    Tables tables = readTables();
    CudaErrorTable cudaErrors = new CudaErrorTable(tables.errors());
    List<Located> specs = new ArrayList<>();
    Map<String, String> macros = new HashMap<>();
    try (InputStream in = resource("catalog.yaml")) {
      readCatalog(in, "builtin:catalog.yaml", specs, macros);
    } catch (IOException e) {
      throw new CatalogException("builtin:catalog.yaml: " + e.getMessage(), e);
    }
    // User signatures go first: a site's own knowledge overrides the defaults.
    List<Located> user = new ArrayList<>();
    for (var e : extra.entrySet()) {
      try (InputStream in = new java.io.ByteArrayInputStream(e.getValue())) {
        readCatalog(in, e.getKey(), user, macros);
      } catch (IOException ex) {
        throw new CatalogException(e.getKey() + ": cannot read: " + ex.getMessage(), ex);
      }
    }
    user.addAll(specs);
    return compile(user, macros, cudaErrors, new XidTable(tables.xids()));
  }

  private static InputStream resource(String name) {
    InputStream in = CatalogLoader.class.getResourceAsStream("/cudawatch/" + name);
    if (in == null) {
      throw new CatalogException(
          "builtin resource /cudawatch/" + name + " is missing from the jar");
    }
    return in;
  }

  private Tables readTables() {
    try (InputStream e = resource("cuda-errors.yaml");
        InputStream x = resource("xids.yaml")) {
      JsonNode errors = YAML.readTree(e).get("errors");
      JsonNode xids = YAML.readTree(x).get("xids");
      List<CudaError> errs = new ArrayList<>();
      for (JsonNode n : errors) {
        errs.add(YAML.treeToValue(n, CudaError.class));
      }
      List<Xid> xs = new ArrayList<>();
      for (JsonNode n : xids) {
        xs.add(YAML.treeToValue(n, Xid.class));
      }
      return new Tables(errs, xs);
    } catch (IOException ex) {
      throw new CatalogException("builtin tables: " + ex.getMessage(), ex);
    }
  }

  /** Streams the YAML so each signature keeps the line it starts on, for error messages. */
  private void readCatalog(
      InputStream in, String file, List<Located> out, Map<String, String> macros)
      throws IOException {
    try (JsonParser p = YAML.getFactory().createParser(in)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new CatalogException(file + ": a catalog is a mapping with 'signatures:'");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        JsonToken t = p.nextToken();
        switch (key) {
          case "version" -> {
            if (p.getValueAsInt(-1) != 1) {
              throw new CatalogException(
                  at(file, p.currentLocation())
                      + "unsupported catalog version '"
                      + p.getText()
                      + "' (this build reads 1)");
            }
          }
          case "macros" -> {
            JsonNode m = YAML.readTree(p);
            m.fields().forEachRemaining(e -> macros.put(e.getKey(), e.getValue().asText()));
          }
          case "signatures" -> {
            if (t != JsonToken.START_ARRAY) {
              throw new CatalogException(
                  at(file, p.currentLocation()) + "'signatures' must be a list");
            }
            while (p.nextToken() == JsonToken.START_OBJECT) {
              JsonLocation start = p.currentLocation();
              try {
                SignatureSpec spec = YAML.readValue(p, SignatureSpec.class);
                out.add(new Located(spec, at(file, start).replaceAll(": $", "")));
              } catch (com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException e) {
                throw new CatalogException(
                    at(file, start)
                        + "signature has unknown key '"
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
          default ->
              throw new CatalogException(
                  at(file, p.currentLocation())
                      + "unknown key '"
                      + key
                      + "' (known: version, macros, signatures)");
        }
      }
    } catch (JsonProcessingException e) {
      throw new CatalogException(
          at(file, e.getLocation()) + "not valid YAML: " + e.getOriginalMessage(), e);
    }
  }

  private static String at(String file, JsonLocation loc) {
    return loc == null ? file + ": " : file + ":" + loc.getLineNr() + ": ";
  }

  private Catalog compile(
      List<Located> specs, Map<String, String> macros, CudaErrorTable errors, XidTable xids) {
    List<Signature> signatures = new ArrayList<>();
    List<Map.Entry<String, Integer>> keywords = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (Located l : specs) {
      SignatureSpec s = l.spec();
      String where = l.origin() + ": signature '" + s.id() + "': ";
      if (s.id() == null || s.id().isBlank()) {
        throw new CatalogException(l.origin() + ": a signature needs an id");
      }
      if (!ids.add(s.id())) {
        // A user signature with a built-in id replaces it.
        continue;
      }
      Role role = parseRole(s.role(), where);
      String cls = s.incidentClass();
      if (cls != null
          && !CLASSES.contains(cls)
          && !cls.equals(Signature.FROM_CUDA_ERROR)
          && !cls.equals(Signature.FROM_ROOT)) {
        throw new CatalogException(where + "unknown class '" + cls + "' (see TAXONOMY.md)");
      }
      if (cls == null && role != Role.ATTACH && role != Role.RESTART) {
        throw new CatalogException(
            where + "needs a class (only role: attach and role: restart may omit it)");
      }
      if (s.severity() != null && !SEVERITIES.contains(s.severity())) {
        throw new CatalogException(
            where + "unknown severity '" + s.severity() + "' (use " + SEVERITIES + ")");
      }
      if (s.suspect() != null && !SUSPECTS.contains(s.suspect())) {
        throw new CatalogException(
            where + "unknown suspect '" + s.suspect() + "' (use " + SUSPECTS + ")");
      }
      if (s.keywords().isEmpty()) {
        throw new CatalogException(
            where + "needs at least one keyword: the literal prefilter keeps classification fast");
      }
      List<String> kws = new ArrayList<>();
      List<String> matchSrc = new ArrayList<>(s.match());
      for (String k : s.keywords()) {
        if (k.equals(DISTINCTIVE)) {
          // The distinctive CUDA error texts, recognised anywhere in a line.
          StringBuilder alt = new StringBuilder();
          for (CudaError e : errors.all()) {
            if (e.distinctive()) {
              kws.add(e.text().toLowerCase(Locale.ROOT));
              alt.append(alt.length() == 0 ? "" : "|").append(Pattern.quote(e.text()));
            }
          }
          matchSrc.add("(?i)(?P<cuda_error_string>" + alt + ")");
        } else {
          if (k.isEmpty()) {
            throw new CatalogException(where + "empty keyword");
          }
          kws.add(k.toLowerCase(Locale.ROOT));
        }
      }
      if (matchSrc.isEmpty()) {
        throw new CatalogException(where + "needs at least one 'match' pattern");
      }
      int index = signatures.size();
      signatures.add(
          new Signature(
              s,
              role,
              compileAll(matchSrc, macros, where),
              compileAll(s.extract(), macros, where),
              compileAll(s.exclude(), macros, where)));
      for (String k : kws) {
        keywords.add(new AbstractMap.SimpleImmutableEntry<>(k, index));
      }
    }
    return new Catalog(signatures, new KeywordMatcher(keywords, signatures.size()), errors, xids);
  }

  private static Role parseRole(String role, String where) {
    if (role == null) {
      return Role.ROOT;
    }
    try {
      return Role.valueOf(role.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new CatalogException(
          where
              + "unknown role '"
              + role
              + "' (use root, attach, event, consequence, consequence_or_root)");
    }
  }

  private static List<Pattern> compileAll(
      List<String> sources, Map<String, String> macros, String where) {
    List<Pattern> out = new ArrayList<>();
    for (String src : sources) {
      String expanded = src;
      for (var m : new LinkedHashMap<>(macros).entrySet()) {
        expanded = expanded.replace("{" + m.getKey() + "}", m.getValue());
      }
      try {
        out.add(Pattern.compile(expanded));
      } catch (PatternSyntaxException e) {
        throw new CatalogException(where + "bad pattern '" + src + "': " + e.getMessage(), e);
      }
    }
    return out;
  }
}
