/**
 * How long to wait after `failures` failures in a row: `baseMs` doubling to at most `maxMs`,
 * jittered between half and all of it, so that replicas that failed together do not retry
 * together. The one shape every loop's backoff takes (the outbox's store errors, a schedule's
 * failed runs).
 */
export function jitteredBackoffMs(
  failures: number,
  limits: { baseMs: number; maxMs: number },
  random: () => number = Math.random,
): number {
  const exponential = Math.min(limits.maxMs, limits.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(exponential * (0.5 + random() / 2));
}
