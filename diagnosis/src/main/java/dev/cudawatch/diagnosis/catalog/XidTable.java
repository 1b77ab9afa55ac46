package dev.cudawatch.diagnosis.catalog;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/** NVIDIA's Xid catalog by code. */
public final class XidTable {
  private final Map<Integer, Xid> byCode;

  public XidTable(List<Xid> xids) {
    this.byCode =
        xids.stream().collect(Collectors.toUnmodifiableMap(Xid::xid, Function.identity()));
  }

  public Optional<Xid> get(int xid) {
    return Optional.ofNullable(byCode.get(xid));
  }
}
