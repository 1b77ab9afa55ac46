import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * A webhook receiver for the compose demo: logs every request (request line and body) to stdout
 * and answers 200, as mendhak/http-https-echo does. Only java.base, so any Java runtime runs it.
 */
public final class HttpEcho {
  private static final int MAX_BODY = 1 << 20; // a webhook batch is small; bound what is logged

  public static void main(String[] args) throws IOException {
    int port = Integer.parseInt(System.getenv().getOrDefault("HTTP_PORT", "8080"));
    try (ServerSocket server = new ServerSocket(port)) {
      System.out.println("http-echo: listening on " + port);
      while (true) {
        Socket s = server.accept();
        new Thread(() -> serve(s)).start();
      }
    }
  }

  private static void serve(Socket s) {
    try (s) {
      s.setSoTimeout(10_000);
      InputStream in = new BufferedInputStream(s.getInputStream());
      String requestLine = line(in);
      int length = 0;
      for (String h = line(in); !h.isEmpty(); h = line(in)) {
        if (h.regionMatches(true, 0, "content-length:", 0, 15)) {
          length = Math.min(MAX_BODY, Integer.parseInt(h.substring(15).trim()));
        }
      }
      String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
      System.out.println(Instant.now() + " " + requestLine + (body.isEmpty() ? "" : " " + body));
      byte[] reply = ("{\"path\":\"" + requestLine.replace("\"", "'") + "\"}\n").getBytes(StandardCharsets.UTF_8);
      OutputStream out = s.getOutputStream();
      out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + reply.length
              + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(reply);
      out.flush();
    } catch (IOException | RuntimeException e) {
      System.out.println("http-echo: " + e);
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
      if (c != '\r' && b.size() < 8192) {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }
}
