package dev.cudawatch.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's headless Chromium through its own chromedriver, driven by Selenium: nothing is
 * downloaded. Where they are not installed the test fails when {@code CI=true} (.ci/run installs
 * them) and is skipped otherwise. Selenium is an optional dependency of testkit: a module that uses
 * this class declares {@code selenium-chrome-driver} itself.
 */
public final class HeadlessChromium {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

  private HeadlessChromium() {}

  /** Fails in CI, skips elsewhere, when Chromium or its driver is not installed. */
  public static void require() {
    if (Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER)) {
      return;
    }
    String why = "needs Debian's chromium and chromium-driver (" + CHROMIUM + ", " + CHROMEDRIVER;
    if ("true".equals(System.getenv("CI"))) {
      fail(why + "): .ci/run installs them");
    }
    Assumptions.abort(why + ")");
  }

  /** A new browser with its profile under {@code dir}; the caller quits it. */
  public static ChromeDriver start(Path dir) {
    require();
    ChromeOptions o = new ChromeOptions();
    o.setBinary(CHROMIUM.toFile());
    o.addArguments(
        "--headless=new",
        "--no-sandbox", // root in CI containers
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1500",
        "--user-data-dir=" + dir.resolve("chromium-profile").toAbsolutePath());
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .build();
    return new ChromeDriver(service, o);
  }

  /**
   * Clicks a link or submit button and waits until the page it leads to has loaded. A click returns
   * before the navigation it starts may have committed: on a loaded machine the rows counted next
   * were the old page's.
   */
  public static void navigate(WebDriver b, WebElement target) {
    WebElement old = b.findElement(By.tagName("html"));
    target.click();
    Await.until(
        "the next page after the click",
        () -> {
          try {
            old.isEnabled(); // throws once the old document is gone
            return false;
          } catch (StaleElementReferenceException gone) {
            return "complete"
                .equals(((JavascriptExecutor) b).executeScript("return document.readyState"));
          }
        },
        Duration.ofSeconds(120));
  }
}
