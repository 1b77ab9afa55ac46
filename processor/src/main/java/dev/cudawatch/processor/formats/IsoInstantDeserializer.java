package dev.cudawatch.processor.formats;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.datatype.jsr310.deser.InstantDeserializer;
import dev.cudawatch.common.wire.IsoInstant;
import java.io.IOException;
import java.time.Instant;

/**
 * Reads the instants the agent writes ({@code 2026-11-22T03:00:00.123Z}) with {@link
 * IsoInstant#parse}, and any other form with Jackson's own {@link InstantDeserializer}.
 */
final class IsoInstantDeserializer extends StdScalarDeserializer<Instant> {
  private static final long serialVersionUID = 1L;

  IsoInstantDeserializer() {
    super(Instant.class);
  }

  @Override
  public Instant deserialize(JsonParser p, DeserializationContext ctx) throws IOException {
    if (p.currentToken() == JsonToken.VALUE_STRING) {
      Instant t = IsoInstant.parse(p.getText());
      if (t != null) {
        return t;
      }
    }
    return InstantDeserializer.INSTANT.deserialize(p, ctx);
  }
}
