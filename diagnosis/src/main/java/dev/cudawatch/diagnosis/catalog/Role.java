package dev.cudawatch.diagnosis.catalog;

/** How a signature's match takes part in an incident. */
public enum Role {
  /** Starts an incident (or joins an open one of the same class). */
  ROOT,
  /** Adds fields to the open incident it names; starts one only when it has a class. */
  ATTACH,
  /** An independent event (kernel-log lines): always its own root, never a consequence. */
  EVENT,
  /** Only meaningful after a root failure (launcher summaries); dropped without one. */
  CONSEQUENCE,
  /** A consequence when a root exists, otherwise a root of its own. */
  CONSEQUENCE_OR_ROOT,
  /**
   * Fields of a record that spans lines and ends in the line of another signature (a launcher's
   * failure summary: host and rank lines before the exit-code line): they join the stream's
   * preamble, merged with what earlier prefix lines put there, never an open incident.
   */
  PREFIX,
  /**
   * A process (re)starts in the stream (a launcher's banner): the episode ends, so the restarted
   * process's first failure is a root again. Makes no incident.
   */
  RESTART
}
