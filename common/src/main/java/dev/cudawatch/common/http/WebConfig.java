package dev.cudawatch.common.http;

import dev.cudawatch.common.config.ConfigException;
import dev.cudawatch.common.config.ConfigLoader;
import dev.cudawatch.common.config.Validated;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * TLS and basic auth of the HTTP server, from a web-config file in the format of Prometheus'
 * exporter-toolkit ({@code web_config_file};
 * https://prometheus.io/docs/prometheus/latest/configuration/https/), so one file configures
 * cudawatch and the Prometheus that scrapes it. Read with the strict loader: keys cudawatch does
 * not implement (inline {@code cert}, {@code cipher_suites}, {@code http_server_config}, ...) are
 * errors, never silently ignored. Relative file names are relative to the web-config file, as in
 * exporter-toolkit.
 */
public final class WebConfig {
  /** The file as written. */
  public record File(TlsServerConfig tlsServerConfig, Map<String, String> basicAuthUsers)
      implements Validated {
    public File {
      basicAuthUsers = basicAuthUsers == null ? Map.of() : Map.copyOf(basicAuthUsers);
    }

    @Override
    public void validate(String path) {
      if (tlsServerConfig != null) {
        tlsServerConfig.validate(path + "tls_server_config.");
      }
      basicAuthUsers.forEach(
          (user, hash) -> {
            Validated.require(
                !user.isEmpty() && user.indexOf(':') < 0,
                path + "basic_auth_users",
                "a user name must be non-empty and hold no ':'");
            Validated.require(
                BasicAuth.isBcrypt(hash),
                path + "basic_auth_users." + user,
                "must be a bcrypt hash ($2a$, $2b$ or $2y$; htpasswd -nBC 10 USER)");
          });
    }
  }

  /**
   * {@code tls_server_config}: the server's certificate chain and key (PEM, the key in PKCS#8),
   * client certificates, and the lowest and highest TLS version.
   */
  public record TlsServerConfig(
      String certFile,
      String keyFile,
      String clientAuthType,
      String clientCaFile,
      String minVersion,
      String maxVersion)
      implements Validated {
    static final List<String> VERSIONS = List.of("TLS10", "TLS11", "TLS12", "TLS13");
    static final List<String> CLIENT_AUTH =
        List.of("NoClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert");

    public TlsServerConfig {
      clientAuthType = clientAuthType == null ? "NoClientCert" : clientAuthType;
      minVersion = minVersion == null ? "TLS12" : minVersion;
      maxVersion = maxVersion == null ? "TLS13" : maxVersion;
    }

    @Override
    public void validate(String path) {
      Validated.require(certFile != null, path + "cert_file", "is required");
      Validated.require(keyFile != null, path + "key_file", "is required");
      Validated.require(
          VERSIONS.contains(minVersion), path + "min_version", "must be one of " + VERSIONS);
      Validated.require(
          VERSIONS.contains(maxVersion), path + "max_version", "must be one of " + VERSIONS);
      Validated.require(
          VERSIONS.indexOf(minVersion) <= VERSIONS.indexOf(maxVersion),
          path + "max_version",
          "must not be below min_version");
      // RequestClientCert and RequireAnyClientCert accept certificates nobody verified: left out
      Validated.require(
          CLIENT_AUTH.contains(clientAuthType),
          path + "client_auth_type",
          "must be one of " + CLIENT_AUTH);
      Validated.require(
          clientAuthType.equals("NoClientCert") || clientCaFile != null,
          path + "client_ca_file",
          "is required to verify client certificates");
    }
  }

  private final TlsFiles tls;
  private final BasicAuth basicAuth;

  private WebConfig(TlsFiles tls, BasicAuth basicAuth) {
    this.tls = tls;
    this.basicAuth = basicAuth;
  }

  /**
   * The web-config at {@code file}, or null when {@code file} is null or empty (plain HTTP, no
   * auth). A missing or bad file, certificate or key is a {@link ConfigException} naming it.
   */
  public static WebConfig load(String file) {
    if (file == null || file.isBlank()) {
      return null;
    }
    Path path = Path.of(file);
    // no environment overrides: the file is the one Prometheus reads too
    File f = new ConfigLoader("CUDAWATCH_WEB_CONFIG_NONE_", Map.of()).load(path, File.class);
    Path dir = path.toAbsolutePath().getParent();
    TlsFiles tls = f.tlsServerConfig() == null ? null : TlsFiles.load(f.tlsServerConfig(), dir);
    BasicAuth auth = f.basicAuthUsers().isEmpty() ? null : new BasicAuth(f.basicAuthUsers());
    return new WebConfig(tls, auth);
  }

  /** The TLS of the server; null for plain HTTP. */
  public TlsFiles tls() {
    return tls;
  }

  /** The users allowed in; null for no auth. */
  public BasicAuth basicAuth() {
    return basicAuth;
  }
}
