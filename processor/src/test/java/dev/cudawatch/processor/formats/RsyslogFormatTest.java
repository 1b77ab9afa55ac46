package dev.cudawatch.processor.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.wire.LogRecord;
import dev.cudawatch.common.wire.RecordKind;
import dev.cudawatch.common.wire.WireFormatException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Records of deploy/shippers/rsyslog's template, as omkafka writes them (jsonf escapes '/'). */
class RsyslogFormatTest {
  private final RsyslogFormat format =
      new RsyslogFormat(new Attribution("/jobs/(?P<job>[^/]+)/rank-(?P<rank>\\d+)\\.log$", null));

  @Test
  void anImfileLineHasFileAndOffset() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    3,
                    """
                    {"timestamp":"2026-11-22T17:01:37.225850+00:00", "hostname":"gpu-node-7",
                     "programname":"training", "syslogtag":"training", "facility":"local0",
                     "msg":"  indented two", "filename":"\\/var\\/log\\/jobs\\/job-42\\/rank-3.log", "fileoffset":"11"}
                    """))
            .get(0);
    assertEquals("/var/log/jobs/job-42/rank-3.log", r.source());
    assertEquals(11, r.offset());
    assertEquals("job-42", r.job());
    assertEquals(3, r.rank());
    assertEquals("  indented two", r.text(), "leading spaces kept: traceback frames");
    assertEquals(Instant.parse("2026-11-22T17:01:37.225850Z"), r.eventTime());
    assertEquals(RecordKind.LOG, r.kind());
  }

  @Test
  void imklogLinesAreKernelRecords() throws Exception {
    LogRecord r =
        format
            .parse(
                Raw.of(
                    3,
                    """
                    {"timestamp":"2026-11-22T17:01:37+01:00", "hostname":"gpu-node-7", "programname":"kernel",
                     "syslogtag":"kernel:", "facility":"kern", "msg":"NVRM: Xid (PCI:0000:00:06): 13, pid=674",
                     "filename":"", "fileoffset":""}
                    """))
            .get(0);
    assertEquals(RecordKind.KERNEL, r.kind());
    assertEquals("kernel", r.source());
    assertEquals("kmsg", r.stream());
    assertEquals(3L << 20, r.offset(), "no file: the Kafka offset");
    assertEquals(Instant.parse("2026-11-22T16:01:37Z"), r.eventTime());
  }

  @Test
  void aUserTaggingItsLinesKernelDoesNotSpeakForTheHardware() throws Exception {
    // `logger -t kernel "NVRM: Xid ..."`: the user facility, whatever the tag says
    LogRecord r =
        format
            .parse(
                Raw.of(
                    4,
                    """
                    {"timestamp":"2026-11-22T17:01:37+01:00", "hostname":"gpu-node-7", "programname":"kernel",
                     "syslogtag":"kernel:", "facility":"user", "msg":"NVRM: Xid (PCI:0000:00:06): 79, pid=674",
                     "filename":"", "fileoffset":""}
                    """))
            .get(0);
    assertEquals(RecordKind.LOG, r.kind());
  }

  @Test
  void recordsOfOtherTemplatesAreRejected() {
    WireFormatException e =
        assertThrows(
            WireFormatException.class,
            () -> format.parse(Raw.of(1, "<13>Nov 22 03:00:00 gpu-node-7 kernel: NVRM: Xid")));
    assertTrue(e.getMessage().startsWith("not JSON (rsyslog)"), e.getMessage());
    e =
        assertThrows(
            WireFormatException.class,
            () ->
                format.parse(
                    Raw.of(1, "{\"msg\":\"x\",\"hostname\":\"h\",\"programname\":\"p\"}")));
    assertEquals("rsyslog record without a timestamp", e.getMessage());
  }
}
