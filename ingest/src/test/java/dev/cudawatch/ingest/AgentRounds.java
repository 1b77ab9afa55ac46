package dev.cudawatch.ingest;

import java.io.IOException;

/** Drives an agent's rounds by hand, for tests that decide when the agent reads. */
final class AgentRounds {
  private AgentRounds() {}

  /**
   * Polls until a round reads nothing: every followed file read to its end. A round reads only a
   * share of each file ({@code read_budget_bytes}), so a large file takes several.
   */
  static int untilRead(Agent agent) throws IOException {
    int rounds = 0;
    while (agent.pollOnce() > 0) {
      if (++rounds > 100_000) {
        throw new AssertionError("the agent was still reading after 100,000 rounds");
      }
    }
    return rounds;
  }
}
