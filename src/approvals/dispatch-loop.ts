import { describe } from '../errors.ts';
import { startLogContext } from '../log-context.ts';
import type { AttemptOutcome } from './delivery-attempt.ts';
import type { createLanePacer } from './lane-pacer.ts';
import type { Deliverable, Outbox } from './outbox.ts';

/*
 * The parts of the dispatcher's loop (announcement-dispatcher.ts): how the store has been
 * answering, the wake-ups that cut an idle wait short, and the attempts started for the heads of
 * free lanes.
 */

export interface DispatchCounts {
  sent: number;
  recovered: number;
  retried: number;
  failed: number;
  skipped: number;
  paused: number;
}

export function emptyCounts(): DispatchCounts {
  return { sent: 0, recovered: 0, retried: 0, failed: 0, skipped: 0, paused: 0 };
}

const COUNTED: Record<Exclude<AttemptOutcome, 'lost'>, keyof DispatchCounts> = {
  sent: 'sent',
  recovered: 'recovered',
  retry: 'retried',
  failed: 'failed',
  skipped: 'skipped',
  paused: 'paused',
};

/** How the store has been answering the loop: what liveness and the backoff read. */
export function createStoreHealth(
  logger: { warn(obj: object, msg: string): void },
  monotonic: () => number,
) {
  // Store errors in a row (reads, claims, records): while above 0 the loop backs off.
  let failuresInARow = 0;
  // Store errors since the start, for drain(): it stops at one rather than claim again in a spin.
  let errors = 0;
  // When the loop last got an answer from the store: read the outbox, or recorded an attempt.
  let lastProgress = monotonic();
  return {
    progressed(): void {
      failuresInARow = 0;
      lastProgress = monotonic();
    },
    failed(error: unknown, what: string): void {
      failuresInARow++;
      errors++;
      const { message, code } = describe(error);
      logger.warn({ error: message, code, failuresInARow }, what);
    },
    /** The loop (re)starts: no answer is overdue yet. */
    started(): void {
      lastProgress = monotonic();
    },
    failuresInARow: () => failuresInARow,
    errors: () => errors,
    sinceProgressMs: () => Math.max(0, monotonic() - lastProgress),
  };
}

export type StoreHealth = ReturnType<typeof createStoreHealth>;

/** Wake-ups: something new to deliver, or a lane freed; an idle wait may end at one. */
export function createWaker() {
  let wakeUp: (() => void) | undefined;
  let woken = false;
  return {
    wake(): void {
      woken = true;
      wakeUp?.();
    },
    /** Whether a wake-up came since the last `clear`. */
    woken: () => woken,
    clear(): void {
      woken = false;
    },
    /** Waits `ms` on a timer; a wake-up ends the wait early when `wakeable()` says so. */
    async idle(ms: number, wakeable: () => boolean): Promise<void> {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wakeUp = () => {
          if (!wakeable()) return;
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = undefined;
    },
  };
}

export interface LaneFillParts {
  store: Pick<Outbox, 'deliverable'>;
  pacer: ReturnType<typeof createLanePacer>;
  lookaheadMs: number;
  concurrency: number;
  deliverOne: (d: Deliverable, now: Date) => Promise<AttemptOutcome>;
  health: StoreHealth;
  wake: () => void;
}

/** The attempts under way, one per lane, and the fill that starts more for free lanes. */
export function createLaneFill(parts: LaneFillParts) {
  const inFlight = new Map<string, Promise<AttemptOutcome>>();
  let filling: Promise<number> = Promise.resolve(0);

  function start(head: Deliverable, now: Date, counts: DispatchCounts): void {
    const attempt = startLogContext({ djbh: head.approval.djbh }, () =>
      parts.deliverOne(head, now),
    ).then(
      (outcome) => {
        parts.health.progressed();
        if (outcome !== 'lost') counts[COUNTED[outcome]]++;
        return outcome;
      },
      (error: unknown) => {
        // The database failed while claiming or recording: the lease runs out and a later
        // attempt, which will look for this one's post first, takes over after the backoff.
        parts.health.failed(error, 'could not record a delivery attempt; it will be retried');
        return 'lost' as const;
      },
    );
    inFlight.set(head.lane, attempt);
    void attempt.finally(() => {
      inFlight.delete(head.lane);
      parts.wake();
    });
  }

  async function fillFreeLanes(now: Date, counts: DispatchCounts): Promise<number> {
    const free = parts.concurrency - inFlight.size;
    if (free <= 0) return 0;
    const heads = await parts.store.deliverable(now, {
      limit: free,
      skipLanes: [...inFlight.keys(), ...parts.pacer.waitingLanes()],
      laneLookaheadMs: parts.lookaheadMs,
    });
    if (heads.length === 0) parts.health.progressed();
    for (const head of heads) start(head, now, counts);
    return heads.length;
  }

  return {
    inFlight,
    /**
     * Starts attempts for the heads of free lanes; serialised so two fills never share a lane.
     * Each fill waits for the one before, whatever its outcome: one failed read must not fail
     * every later one (a chain left rejected stopped delivery on that replica for good).
     */
    fill(now: Date, counts: DispatchCounts): Promise<number> {
      const turn = filling.then(() => fillFreeLanes(now, counts));
      filling = turn.catch(() => 0);
      return turn;
    },
  };
}

export type LaneFill = ReturnType<typeof createLaneFill>;
