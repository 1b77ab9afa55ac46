package dev.cudawatch.processor.formats;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.WireFormatException;
import dev.cudawatch.common.wire.WireJson;
import dev.cudawatch.processor.records.RawRecord;
import java.util.List;

/** The cudawatch agent's own versioned records. */
public final class CudawatchFormat implements RecordFormat {
  private static final long serialVersionUID = 1L;

  @Override
  public List<LogRecord> parse(RawRecord raw) throws WireFormatException {
    return List.of(WireJson.readLogRecord(raw.value));
  }
}
