package dev.cudawatch.diagnosis.catalog;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import dev.cudawatch.diagnosis.datafile.CatalogException;
import dev.cudawatch.diagnosis.datafile.StrictYaml;
import dev.cudawatch.diagnosis.taxonomy.Taxonomy;
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
  private static final String DISTINCTIVE = "@distinctive";
  private static final String LIBRARY_STATUSES = "@library_statuses";
  private static final ObjectMapper YAML = StrictYaml.MAPPER;

  private record Located(SignatureSpec spec, String origin) {}

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
    // the taxonomy parses on another core while this thread reads the catalogs: start-up time
    java.util.concurrent.CompletableFuture<Taxonomy> taxonomyLoad =
        new java.util.concurrent.CompletableFuture<>();
    Thread loader =
        new Thread(
            () -> {
              try {
                taxonomyLoad.complete(Taxonomy.builtIn());
              } catch (RuntimeException | Error e) {
                taxonomyLoad.completeExceptionally(e);
              }
            },
            "taxonomy-load");
    loader.setDaemon(true);
    loader.start();
    CudaErrorTable cudaErrors = new CudaErrorTable(readCudaErrors());
    LibraryStatusTable libraryStatuses = new LibraryStatusTable(readLibraryStatuses());
    List<Located> specs = new ArrayList<>();
    List<Located> steps = new ArrayList<>();
    Map<String, String> macros = new HashMap<>();
    try (InputStream in = resource("catalog.yaml")) {
      readCatalog(in, "builtin:catalog.yaml", specs, steps, macros);
    } catch (IOException e) {
      throw new CatalogException("builtin:catalog.yaml: " + e.getMessage(), e);
    }
    // User signatures go first: a site's own knowledge overrides the defaults.
    List<Located> user = new ArrayList<>();
    List<Located> userSteps = new ArrayList<>();
    for (var e : extra.entrySet()) {
      try (InputStream in = new java.io.ByteArrayInputStream(e.getValue())) {
        readCatalog(in, e.getKey(), user, userSteps, macros);
      } catch (IOException ex) {
        throw new CatalogException(e.getKey() + ": cannot read: " + ex.getMessage(), ex);
      }
    }
    Taxonomy taxonomy;
    try {
      taxonomy = taxonomyLoad.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw e;
    }
    requireKnownClasses(libraryStatuses, taxonomy);
    requireEveryClassProduced(specs, cudaErrors, libraryStatuses, taxonomy);
    user.addAll(specs);
    userSteps.addAll(steps);
    return compile(user, macros, cudaErrors, libraryStatuses, taxonomy)
        .withStepTimes(compileStepTimes(userSteps, macros));
  }

  /**
   * Step-time patterns: keywords and RE2/J like signatures, no class; one of {@link
   * StepTimeExtractor#GROUPS} must be a named group. A site's pattern with a built-in id replaces
   * it.
   */
  private static StepTimeExtractor compileStepTimes(
      List<Located> specs, Map<String, String> macros) {
    List<Signature> out = new ArrayList<>();
    List<Map.Entry<String, Integer>> keywords = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (Located l : specs) {
      SignatureSpec s = l.spec();
      String where = l.origin() + ": step time '" + s.id() + "': ";
      if (s.id() == null || s.id().isBlank()) {
        throw new CatalogException(l.origin() + ": a step time pattern needs an id");
      }
      if (!ids.add(s.id())) {
        continue;
      }
      if (s.incidentClass() != null || s.role() != null) {
        throw new CatalogException(
            where + "takes no class or role (it measures, it does not diagnose)");
      }
      if (s.keywords().isEmpty() || s.match().isEmpty()) {
        throw new CatalogException(where + "needs keywords and at least one 'match' pattern");
      }
      List<Pattern> match = compileAll(s.match(), macros, where);
      List<Pattern> extract = compileAll(s.extract(), macros, where);
      Set<String> groups = new HashSet<>();
      match.forEach(p -> groups.addAll(p.namedGroups().keySet()));
      extract.forEach(p -> groups.addAll(p.namedGroups().keySet()));
      if (StepTimeExtractor.GROUPS.stream().noneMatch(groups::contains)) {
        throw new CatalogException(
            where + "names none of the groups " + StepTimeExtractor.GROUPS + " in its patterns");
      }
      for (String k : s.keywords()) {
        if (k.isEmpty()) {
          throw new CatalogException(where + "empty keyword");
        }
        keywords.add(
            new AbstractMap.SimpleImmutableEntry<>(k.toLowerCase(Locale.ROOT), out.size()));
      }
      out.add(new Signature(s, Role.ROOT, match, extract, compileAll(s.exclude(), macros, where)));
    }
    return new StepTimeExtractor(out, new KeywordMatcher(keywords, out.size()));
  }

  private static InputStream resource(String name) {
    InputStream in = CatalogLoader.class.getResourceAsStream("/cudawatch/" + name);
    if (in == null) {
      throw new CatalogException(
          "builtin resource /cudawatch/" + name + " is missing from the jar");
    }
    return in;
  }

  private List<CudaError> readCudaErrors() {
    // streamed item by item, like the catalog: no tree of the whole file first (start-up time)
    try (InputStream e = resource("cuda-errors.yaml")) {
      List<StrictYaml.Located<CudaError>> errs = new ArrayList<>();
      StrictYaml.read(
          e,
          "builtin:cuda-errors.yaml",
          Map.of(
              "errors",
              (p, t) ->
                  StrictYaml.readList(
                      p, t, "builtin:cuda-errors.yaml", "errors", CudaError.class, errs)));
      return errs.stream().map(StrictYaml.Located::value).toList();
    } catch (IOException ex) {
      throw new CatalogException("builtin:cuda-errors.yaml: " + ex.getMessage(), ex);
    }
  }

  private static final String LIBRARY_FILE = "builtin:library-statuses.yaml";

  /** The library tables, flattened: each status with its table's defaults filled in. */
  private List<LibraryStatus> readLibraryStatuses() {
    try (InputStream in = resource("library-statuses.yaml")) {
      List<StrictYaml.Located<LibraryStatusFamily>> families = new ArrayList<>();
      StrictYaml.read(
          in,
          LIBRARY_FILE,
          Map.of(
              "libraries",
              (p, t) ->
                  StrictYaml.readList(
                      p, t, LIBRARY_FILE, "libraries", LibraryStatusFamily.class, families)));
      List<LibraryStatus> out = new ArrayList<>();
      Set<String> codes = new HashSet<>();
      for (var located : families) {
        LibraryStatusFamily f = located.value();
        String where = located.origin() + ": ";
        if (f.library() == null || f.source() == null || f.incidentClass() == null) {
          throw new CatalogException(where + "a library table needs library, source and class");
        }
        if (f.statuses() == null || f.statuses().isEmpty()) {
          throw new CatalogException(where + f.library() + ": no statuses");
        }
        for (LibraryStatusFamily.Entry e : f.statuses()) {
          if (e.name() == null || e.code() == null) {
            throw new CatalogException(where + f.library() + ": a status needs a name and a code");
          }
          if (e.code() == 0) {
            throw new CatalogException(where + e.name() + ": 0 is success, not a failure");
          }
          if (!codes.add(f.library() + ':' + e.code())) {
            throw new CatalogException(
                where + e.name() + ": " + f.library() + " code " + e.code() + " listed twice");
          }
          String suspect = e.suspect() != null ? e.suspect() : f.suspect();
          if (suspect != null && !Taxonomy.SUSPECTS.contains(suspect)) {
            throw new CatalogException(where + e.name() + ": unknown suspect '" + suspect + "'");
          }
          out.add(
              new LibraryStatus(
                  f.library(),
                  e.name(),
                  e.code(),
                  e.text(),
                  e.incidentClass() != null ? e.incidentClass() : f.incidentClass(),
                  suspect));
        }
      }
      return out;
    } catch (IOException ex) {
      throw new CatalogException(LIBRARY_FILE + ": " + ex.getMessage(), ex);
    }
  }

  private static void requireKnownClasses(LibraryStatusTable statuses, Taxonomy taxonomy) {
    for (LibraryStatus s : statuses.all()) {
      if (!taxonomy.contains(s.incidentClass())) {
        throw new CatalogException(
            LIBRARY_FILE
                + ": "
                + s.name()
                + ": unknown class '"
                + s.incidentClass()
                + "' (classes are those of taxonomy.yaml)");
      }
    }
  }

  /**
   * Every class of the taxonomy must be produced by a built-in signature, CUDA error or detector.
   */
  private static void requireEveryClassProduced(
      List<Located> builtIn,
      CudaErrorTable errors,
      LibraryStatusTable libraryStatuses,
      Taxonomy taxonomy) {
    Set<String> produced = new HashSet<>();
    libraryStatuses.all().forEach(s -> produced.add(s.incidentClass()));
    builtIn.forEach(l -> produced.add(l.spec().incidentClass()));
    errors.all().forEach(e -> produced.add(e.incidentClass()));
    taxonomy.requireProduced(produced);
    for (CudaError e : errors.all()) {
      if (!taxonomy.contains(e.incidentClass())) {
        throw new CatalogException(
            "builtin:cuda-errors.yaml: "
                + e.name()
                + ": unknown class '"
                + e.incidentClass()
                + "' (classes are those of taxonomy.yaml)");
      }
    }
  }

  /** The top-level keys a catalog file may have (what {@code readCatalog} reads). */
  public static final Set<String> SECTIONS =
      Set.of("version", "macros", "signatures", "tests", "step_times");

  /** Streams the YAML so each signature keeps the line it starts on, for error messages. */
  private void readCatalog(
      InputStream in,
      String file,
      List<Located> out,
      List<Located> stepTimes,
      Map<String, String> macros) {
    Map<String, StrictYaml.Section> sections = new LinkedHashMap<>();
    sections.put(
        "version",
        (p, t) -> {
          if (p.getValueAsInt(-1) != 1) {
            throw new CatalogException(
                at(file, p.currentLocation())
                    + "unsupported catalog version '"
                    + p.getText()
                    + "' (this build reads 1)");
          }
        });
    sections.put(
        "macros",
        (p, t) -> {
          JsonNode m = YAML.readTree(p);
          m.properties().forEach(e -> macros.put(e.getKey(), e.getValue().asText()));
        });
    sections.put(
        "signatures",
        (p, t) -> {
          List<StrictYaml.Located<SignatureSpec>> specs = new ArrayList<>();
          StrictYaml.readList(p, t, file, "signatures", SignatureSpec.class, specs);
          specs.forEach(l -> out.add(new Located(l.value(), l.origin())));
        });
    // a catalog's own test cases (bin/cudawatch catalog test, CatalogTests) are not signatures
    sections.put("tests", (p, t) -> p.skipChildren());
    sections.put(
        "step_times",
        (p, t) -> {
          List<StrictYaml.Located<SignatureSpec>> specs = new ArrayList<>();
          StrictYaml.readList(p, t, file, "step_times", SignatureSpec.class, specs);
          specs.forEach(l -> stepTimes.add(new Located(l.value(), l.origin())));
        });
    assert sections.keySet().equals(SECTIONS);
    StrictYaml.read(in, file, sections);
  }

  private static String at(String file, JsonLocation loc) {
    return StrictYaml.at(file, loc);
  }

  private Catalog compile(
      List<Located> specs,
      Map<String, String> macros,
      CudaErrorTable errors,
      LibraryStatusTable libraryStatuses,
      Taxonomy taxonomy) {
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
          && !taxonomy.contains(cls)
          && !cls.equals(Signature.FROM_CUDA_ERROR)
          && !cls.equals(Signature.FROM_LIBRARY_STATUS)
          && !cls.equals(Signature.FROM_ROOT)) {
        throw new CatalogException(
            where
                + "unknown class '"
                + cls
                + "' (classes are those of taxonomy.yaml, docs/taxonomy.md)");
      }
      if (cls == null && role != Role.ATTACH && role != Role.RESTART && role != Role.PREFIX) {
        throw new CatalogException(
            where + "needs a class (only role: attach, prefix and restart may omit it)");
      }
      if (s.severity() != null && !Taxonomy.SEVERITIES.contains(s.severity())) {
        throw new CatalogException(
            where + "unknown severity '" + s.severity() + "' (use " + Taxonomy.SEVERITIES + ")");
      }
      if (s.suspect() != null && !Taxonomy.SUSPECTS.contains(s.suspect())) {
        throw new CatalogException(
            where + "unknown suspect '" + s.suspect() + "' (use " + Taxonomy.SUSPECTS + ")");
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
        } else if (k.equals(LIBRARY_STATUSES)) {
          // Every library status name, in an error context: the generic layer under the
          // framework signatures. A context word before or after the name (RE2 has no look-around).
          StringBuilder alt = new StringBuilder();
          Set<String> seen = new HashSet<>();
          for (LibraryStatus st : libraryStatuses.all()) {
            if (seen.add(st.name())) {
              kws.add(st.name().toLowerCase(Locale.ROOT));
              alt.append(alt.length() == 0 ? "" : "|").append(st.name());
            }
          }
          String names = "\\b(?P<library_status>" + alt + ")\\b";
          String context = "(?i:error|fail|exception|fatal|abort|status|returned|result|code)";
          matchSrc.add(context + ".*?" + names);
          matchSrc.add(names + ".*?" + context);
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
    return new Catalog(
        signatures,
        new KeywordMatcher(keywords, signatures.size()),
        errors,
        libraryStatuses,
        taxonomy);
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
