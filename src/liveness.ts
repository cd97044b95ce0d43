/**
 * What /healthz and a gauge know of the background loops: each loop says how long since it last
 * made progress (got an answer from the store). A loop stuck longer than the limit fails liveness,
 * so that Kubernetes restarts the pod; a loop that recovers by itself never gets that far.
 */
export interface Liveness {
  /** Registers a loop by name; `sinceProgressMs` is 0 while it is not running. */
  watch(loop: string, sinceProgressMs: () => number): void;
  /** How long the loop has made no progress, in ms (0 for a loop not watched). */
  sinceProgressMs(loop: string): number;
  /** The loops stuck for longer than the limit, each with how long. */
  stuck(): Array<{ loop: string; ms: number }>;
}

/** The loop that delivers the outbox. */
export const DELIVERY_LOOP = 'delivery';
/**
 * The poll schedule's passes. A pass claims for its lease; one still running past it (a query on
 * a connection that died without a word, say) has lost its claims and is stuck: how long past it
 * is what this loop reports.
 */
export const POLL_LOOP = 'checks';

/**
 * `limitMs`: how long a loop may go without progress (LIVENESS_STALL_SECONDS). A loop found stuck
 * is logged at error once, and again at info when it moves again.
 */
export function createLiveness(
  limitMs: number,
  logger: { error(obj: object, msg: string): void; info(obj: object, msg: string): void },
): Liveness {
  const loops = new Map<string, () => number>();
  const stuckNow = new Set<string>();
  const noticed = (loop: string, ms: number) => {
    const stuck = ms > limitMs;
    if (stuck && !stuckNow.has(loop)) {
      stuckNow.add(loop);
      logger.error(
        { loop, secondsWithoutProgress: Math.round(ms / 1000), limitSeconds: limitMs / 1000 },
        'a background loop has made no progress for too long: /healthz fails so that the process is restarted',
      );
    } else if (!stuck && stuckNow.delete(loop))
      logger.info({ loop }, 'the background loop makes progress again');
    return stuck;
  };
  return {
    watch(loop, sinceProgressMs) {
      loops.set(loop, sinceProgressMs);
    },
    sinceProgressMs(loop) {
      const ms = loops.get(loop)?.() ?? 0;
      noticed(loop, ms);
      return ms;
    },
    stuck() {
      return [...loops]
        .map(([loop, since]) => ({ loop, ms: since() }))
        .filter(({ loop, ms }) => noticed(loop, ms));
    },
  };
}
