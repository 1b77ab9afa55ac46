package dev.cudawatch.testkit;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed RSA certificate for localhost and 127.0.0.1, made by the JDK's keytool (a real
 * program, as an operator would) and written as PEM: the certificate and an unencrypted PKCS#8 key,
 * what {@code tls_server_config} reads. Valid from 2020 for a century, so it holds under a shifted
 * clock (faketime). {@link #trusting} gives a client context that trusts only it.
 */
public final class SelfSignedCertificate {
  private SelfSignedCertificate() {}

  public static void write(Path certPem, Path keyPem) throws IOException, InterruptedException {
    Path p12 = certPem.resolveSibling(certPem.getFileName() + ".p12");
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "server",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=localhost",
                "-ext",
                "san=dns:localhost,ip:127.0.0.1",
                // its own CA too: Prometheus (Go) takes it as the scrape's ca_file only so
                "-ext",
                "bc:c=ca:true",
                "-startdate",
                "2020/01/01 00:00:00",
                "-validity",
                "36500",
                "-storetype",
                "PKCS12",
                "-keystore",
                p12.toString(),
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .start();
    String out = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
      keytool.destroyForcibly();
      throw new IOException("keytool failed: " + out);
    }
    try (var in = Files.newInputStream(p12)) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(in, "changeit".toCharArray());
      Certificate c = ks.getCertificate("server");
      Files.writeString(certPem, pem("CERTIFICATE", c.getEncoded()));
      Files.writeString(
          keyPem, pem("PRIVATE KEY", ks.getKey("server", "changeit".toCharArray()).getEncoded()));
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot read keytool's key store: " + e, e);
    }
  }

  /** A client context that trusts exactly this certificate. */
  public static SSLContext trusting(Path certPem) throws IOException, GeneralSecurityException {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (var in = new ByteArrayInputStream(Files.readAllBytes(certPem))) {
      trust.setCertificateEntry(
          "cudawatch", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }
}
