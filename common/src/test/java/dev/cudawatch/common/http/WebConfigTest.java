package dev.cudawatch.common.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.cudawatch.common.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.security.crypto.bcrypt.BCrypt;

/** Reading a web-config strictly, and basic auth against its bcrypt hashes. */
class WebConfigTest {
  @TempDir Path dir;

  private Path write(String yaml) throws Exception {
    Path p = dir.resolve("web.yml");
    Files.writeString(p, yaml);
    return p;
  }

  private static String basic(String user, String password) {
    return "Basic "
        + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void noFileIsPlainHttpWithoutAuth() {
    assertNull(WebConfig.load(null));
    assertNull(WebConfig.load(""));
  }

  @Test
  void basicAuthAcceptsTheRightPasswordOnlyIncludingHtpasswdsY() throws Exception {
    // htpasswd -B writes $2y$; the same hash under the name Apache gives it
    String hash = BCrypt.hashpw("pw", BCrypt.gensalt(4)).replaceFirst("^\\$2a\\$", "\\$2y\\$");
    WebConfig c = WebConfig.load(write("basic_auth_users:\n  alice: '" + hash + "'\n").toString());
    assertNull(c.tls());
    BasicAuth auth = c.basicAuth();
    assertTrue(auth.allows(basic("alice", "pw")));
    assertTrue(auth.allows(basic("alice", "pw"))); // from the cache
    assertFalse(auth.allows(basic("alice", "wrong")));
    assertFalse(auth.allows(basic("bob", "pw")));
    assertFalse(auth.allows(null));
    assertFalse(auth.allows("Bearer x"));
    assertFalse(auth.allows("Basic !!!not-base64"));
    assertFalse(auth.allows("Basic " + Base64.getEncoder().encodeToString("nocolon".getBytes())));
  }

  @Test
  void unknownKeysBadHashesAndMissingFilesAreOneLineErrors() throws Exception {
    String unknown =
        assertThrows(
                ConfigException.class,
                () -> WebConfig.load(write("http_server_config:\n  http2: false\n").toString()))
            .getMessage();
    assertTrue(unknown.contains("http_server_config") && unknown.contains("unknown key"), unknown);
    String plain =
        assertThrows(
                ConfigException.class,
                () -> WebConfig.load(write("basic_auth_users:\n  alice: hunter2\n").toString()))
            .getMessage();
    assertTrue(plain.contains("basic_auth_users.alice") && plain.contains("bcrypt"), plain);
    String noKey =
        assertThrows(
                ConfigException.class,
                () -> WebConfig.load(write("tls_server_config:\n  cert_file: c.pem\n").toString()))
            .getMessage();
    assertTrue(noKey.contains("key_file"), noKey);
    String missing =
        assertThrows(
                ConfigException.class,
                () ->
                    WebConfig.load(
                        write("tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n")
                            .toString()))
            .getMessage();
    assertTrue(missing.contains("c.pem"), missing);
    String anyCert =
        assertThrows(
                ConfigException.class,
                () ->
                    WebConfig.load(
                        write(
                                "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n"
                                    + "  client_auth_type: RequireAnyClientCert\n")
                            .toString()))
            .getMessage();
    assertTrue(anyCert.contains("client_auth_type"), anyCert);
    assertFalse(missing.contains("\n"), missing);
  }
}
