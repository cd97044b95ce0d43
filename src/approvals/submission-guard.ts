/**
 * Makes a form submission start at most one approval, whichever replica a replay of it reaches.
 * Implemented in src/store (a table keyed by the submission), so replicas share it.
 */
export interface SubmissionGuard {
  /** True for the first taker of `key`; false when it is already taken (a replay). */
  take(key: string, now: Date): Promise<boolean>;
  /** Gives `key` back after a submission that started nothing, so the person can submit again. */
  release(key: string): Promise<void>;
}

/** The replay key of one run of the workflow step: one approval per run, whoever receives it. */
export const stepSubmissionKey = (executionId: string): string => `step:${executionId}`;
