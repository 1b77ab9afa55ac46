package dev.cudawatch.diagnosis.catalog;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Looks the CUDA libraries' statuses up by name, or by library and number or message. */
public final class LibraryStatusTable {
  private final List<LibraryStatus> all;
  private final Map<String, LibraryStatus> byName = new HashMap<>();
  private final Map<String, LibraryStatus> byCode = new HashMap<>();
  private final Map<String, List<LibraryStatus>> withText = new HashMap<>();

  public LibraryStatusTable(List<LibraryStatus> statuses) {
    this.all = List.copyOf(statuses);
    for (LibraryStatus s : all) {
      byName.putIfAbsent(s.name(), s); // cuDNN 9 kept old names: the 7-8 entry names them
      byCode.putIfAbsent(s.library() + ':' + s.code(), s);
      if (s.text() != null) {
        withText.computeIfAbsent(s.library(), k -> new ArrayList<>()).add(s);
      }
    }
  }

  public Optional<LibraryStatus> byName(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  public Optional<LibraryStatus> byCode(String library, long code) {
    return Optional.ofNullable(byCode.get(library + ':' + code));
  }

  /**
   * The status whose message this text is: exact, or one starting with the other (NCCL added "(run
   * with NCCL_DEBUG=INFO for details)" to its messages; a log may cut a message short).
   */
  public Optional<LibraryStatus> byText(String library, String text) {
    String t = normalise(text);
    if (t.isEmpty()) {
      return Optional.empty();
    }
    LibraryStatus best = null;
    for (LibraryStatus s : withText.getOrDefault(library, List.of())) {
      String st = normalise(s.text());
      if (st.equals(t)) {
        return Optional.of(s);
      }
      if (best == null && (t.startsWith(st) || st.startsWith(t))) {
        best = s;
      }
    }
    return Optional.ofNullable(best);
  }

  public List<LibraryStatus> all() {
    return all;
  }

  /** The libraries, as the {@code library} field names them. */
  public List<String> libraries() {
    return all.stream().map(LibraryStatus::library).distinct().toList();
  }

  private static String normalise(String s) {
    String t = s.strip().toLowerCase(Locale.ROOT);
    while (t.endsWith(".")) {
      t = t.substring(0, t.length() - 1);
    }
    return t;
  }
}
