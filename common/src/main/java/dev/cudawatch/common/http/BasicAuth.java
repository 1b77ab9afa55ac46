package dev.cudawatch.common.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.security.crypto.bcrypt.BCrypt;

/**
 * HTTP basic auth against bcrypt hashes ({@code basic_auth_users} of a web-config). bcrypt is slow
 * on purpose (tens of ms at cost 10), and Prometheus sends the same credentials every scrape, so
 * verified credentials are remembered, by a SHA-256 of user and password, in a small bounded cache;
 * failures never are. An unknown user costs a bcrypt check too, so timing tells no user names.
 */
public final class BasicAuth {
  static final int CACHE_ENTRIES = 64;
  // a bcrypt hash of nothing anyone sends, so unknown users cost what known ones do
  private static final String DUMMY = BCrypt.hashpw("cudawatch-no-such-user", BCrypt.gensalt(10));

  private final Map<String, String> users;
  private final Map<String, Boolean> verified =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> e) {
          return size() > CACHE_ENTRIES;
        }
      };

  BasicAuth(Map<String, String> users) {
    this.users = Map.copyOf(users);
  }

  static boolean isBcrypt(String hash) {
    return hash != null && hash.length() == 60 && hash.matches("\\$2[aby]\\$\\d\\d\\$.*");
  }

  /** Whether an {@code Authorization} header value names a user with the right password. */
  public boolean allows(String authorization) {
    if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
      return false;
    }
    String pair;
    try {
      pair =
          new String(
              Base64.getDecoder().decode(authorization.substring(6).trim()),
              StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
    int colon = pair.indexOf(':');
    if (colon < 0) {
      return false;
    }
    String user = pair.substring(0, colon);
    String password = pair.substring(colon + 1);
    String key = digest(user, password);
    synchronized (verified) {
      if (verified.containsKey(key)) {
        return true;
      }
    }
    String hash = users.get(user);
    boolean ok;
    try {
      ok = BCrypt.checkpw(password, hash == null ? DUMMY : hash) && hash != null;
    } catch (IllegalArgumentException e) {
      ok = false; // a hash the library cannot read: validated at load, so not expected
    }
    if (ok) {
      synchronized (verified) {
        verified.put(key, Boolean.TRUE);
      }
    }
    return ok;
  }

  private static String digest(String user, String password) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      d.update(user.getBytes(StandardCharsets.UTF_8));
      d.update((byte) 0);
      d.update(password.getBytes(StandardCharsets.UTF_8));
      return Base64.getEncoder().encodeToString(d.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
