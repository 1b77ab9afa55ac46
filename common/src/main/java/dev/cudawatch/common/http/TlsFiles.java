package dev.cudawatch.common.http;

import dev.cudawatch.common.config.ConfigException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The server side of {@code tls_server_config}: the PEM certificate chain and PKCS#8 key read into
 * an in-memory key store for Jetty, the client CA when client certificates are verified, and the
 * allowed TLS versions. Read once at start; a bad file is a one-line {@link ConfigException}.
 */
public final class TlsFiles {
  private static final char[] IN_MEMORY = "cudawatch".toCharArray(); // never written anywhere

  private final KeyStore keys;
  private final KeyStore clientCas;
  private final WebConfig.TlsServerConfig config;

  private TlsFiles(KeyStore keys, KeyStore clientCas, WebConfig.TlsServerConfig config) {
    this.keys = keys;
    this.clientCas = clientCas;
    this.config = config;
  }

  static TlsFiles load(WebConfig.TlsServerConfig c, Path dir) {
    Path cert = dir.resolve(c.certFile());
    Path key = dir.resolve(c.keyFile());
    try {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      List<Certificate> chain = certificates(cert);
      keys.setKeyEntry("server", privateKey(key), IN_MEMORY, chain.toArray(new Certificate[0]));
      KeyStore cas = null;
      if (c.clientCaFile() != null) {
        cas = KeyStore.getInstance("PKCS12");
        cas.load(null, null);
        int i = 0;
        for (Certificate ca : certificates(dir.resolve(c.clientCaFile()))) {
          cas.setCertificateEntry("ca-" + i++, ca);
        }
      }
      return new TlsFiles(keys, cas, c);
    } catch (IOException | GeneralSecurityException e) {
      throw new ConfigException(
          "tls_server_config: cannot use " + cert + " and " + key + ": " + e.getMessage());
    }
  }

  private static List<Certificate> certificates(Path pem)
      throws IOException, GeneralSecurityException {
    Collection<? extends Certificate> certs;
    try (var in = new ByteArrayInputStream(Files.readAllBytes(pem))) {
      certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
    }
    if (certs.isEmpty()) {
      throw new GeneralSecurityException(pem + " holds no PEM certificate");
    }
    return new ArrayList<>(certs);
  }

  private static PrivateKey privateKey(Path pem) throws IOException, GeneralSecurityException {
    String text = Files.readString(pem, StandardCharsets.US_ASCII);
    String begin = "-----BEGIN PRIVATE KEY-----";
    int from = text.indexOf(begin);
    int to = text.indexOf("-----END PRIVATE KEY-----");
    if (from < 0 || to < from) {
      throw new GeneralSecurityException(
          pem
              + " holds no unencrypted PKCS#8 key (BEGIN PRIVATE KEY); convert it with"
              + " openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8");
    }
    byte[] der = Base64.getMimeDecoder().decode(text.substring(from + begin.length(), to));
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String algorithm : List.of("RSA", "EC", "Ed25519")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException wrongAlgorithm) {
        // try the next
      }
    }
    throw new GeneralSecurityException(pem + ": not an RSA, EC or Ed25519 key");
  }

  /** A new Jetty factory for one server. */
  SslContextFactory.Server sslContextFactory() {
    SslContextFactory.Server f = new SslContextFactory.Server();
    f.setKeyStore(keys);
    f.setKeyStorePassword(new String(IN_MEMORY));
    f.setKeyManagerPassword(new String(IN_MEMORY));
    f.setIncludeProtocols(protocols());
    if (clientCas != null) {
      f.setTrustStore(clientCas);
    }
    switch (config.clientAuthType()) {
      case "VerifyClientCertIfGiven" -> f.setWantClientAuth(true);
      case "RequireAndVerifyClientCert" -> f.setNeedClientAuth(true);
      default -> {
        // NoClientCert
      }
    }
    return f;
  }

  /**
   * The JDK's context for the same key, client CAs and versions (the agent's server, which has no
   * Jetty); {@link #parameters} gives the versions and client-certificate mode for each connection.
   */
  public SSLContext sslContext() throws GeneralSecurityException {
    KeyManagerFactory km = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    km.init(keys, IN_MEMORY);
    TrustManager[] trust = null;
    if (clientCas != null) {
      TrustManagerFactory tm =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tm.init(clientCas);
      trust = tm.getTrustManagers();
    }
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(km.getKeyManagers(), trust, null);
    return context;
  }

  /** The context's defaults narrowed to the configured versions and client-certificate mode. */
  public SSLParameters parameters(SSLContext context) {
    SSLParameters p = context.getDefaultSSLParameters();
    p.setProtocols(protocols());
    switch (config.clientAuthType()) {
      case "VerifyClientCertIfGiven" -> p.setWantClientAuth(true);
      case "RequireAndVerifyClientCert" -> p.setNeedClientAuth(true);
      default -> {
        // NoClientCert
      }
    }
    return p;
  }

  private String[] protocols() {
    List<String> all = WebConfig.TlsServerConfig.VERSIONS;
    return all
        .subList(all.indexOf(config.minVersion()), all.indexOf(config.maxVersion()) + 1)
        .stream()
        .map(TlsFiles::protocol)
        .toArray(String[]::new);
  }

  private static String protocol(String version) {
    return switch (version) {
      case "TLS10" -> "TLSv1";
      case "TLS11" -> "TLSv1.1";
      case "TLS12" -> "TLSv1.2";
      default -> "TLSv1.3";
    };
  }
}
