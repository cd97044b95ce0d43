import { jitteredBackoffMs } from '../backoff.ts';
import type { Announcer } from './announcer.ts';
import {
  type AttemptOutcome,
  type AttemptSettings,
  createDeliveryAttempt,
} from './delivery-attempt.ts';
import type { DeliveryPause } from './delivery-pause.ts';
import { createPauseWatch } from './delivery-pause-watch.ts';
import {
  createLaneFill,
  createStoreHealth,
  createWaker,
  type DispatchCounts,
  emptyCounts,
  type LaneFill,
  type StoreHealth,
} from './dispatch-loop.ts';
import { createLanePacer } from './lane-pacer.ts';
import type { Outbox } from './outbox.ts';
import type { TrackedApproval } from './tracked-approval.ts';

export interface DispatcherOptions {
  /** How long one attempt holds an announcement, on the database's clock. */
  leaseMs: number;
  /**
   * The longest one call to the chat can take. An attempt starts no call later than
   * `leaseMs - 2 × callTimeoutMs` after its claim, so its last call ends before the lease does.
   */
  callTimeoutMs: number;
  /** A delivery that keeps failing in ways that may pass is tried this long before it fails. */
  retryForMs: number;
  /** Posts in one lane (one channel, one DM) are at least this far apart: Slack allows ~1/s. */
  laneIntervalMs: number;
  /**
   * A 429's Retry-After is honoured up to this long (for the announcement and its lane): a
   * far-future value, from Slack or a proxy, must not hold a channel past the retry window with
   * nothing failed or alerted. Unset: no cap.
   */
  retryAfterMaxMs?: number;
  /**
   * After a post whose outcome is unknown, Slack may still commit it this long after the client
   * gave up (or after a dead attempt's lease ended). Until then a retry only searches for it and
   * looks again later; it posts again only when a search begun after the horizon finds nothing.
   * Per announcement: its lane serves other approvals meanwhile. Unset: 0 (no wait).
   */
  commitHorizonMs?: number;
  /**
   * A lane may be claimed this long before its pace allows the next post; the attempt then waits
   * out the rest and posts on time. Claiming takes database round trips (tens of ms on a busy
   * Postgres) that would otherwise add to every gap between two posts of a busy channel.
   */
  laneLookaheadMs?: number;
  /** Lanes delivered at the same time. */
  concurrency: number;
  /** How often an idle dispatcher looks for work it was not told about (retries, other replicas). */
  idleMs: number;
  /**
   * While delivery is paused (Slack refuses the token), how often each replica asks Slack whether
   * the token works again; also how often a running replica notices a pause another one set.
   */
  pauseCheckMs?: number;
}

export interface DispatcherDeps {
  store: Outbox & DeliveryPause;
  announcer: Announcer;
  logger: {
    debug(obj: object, msg: string): void;
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  now: () => Date;
  /**
   * Asks the service whether an approval is still undecided, before a reminder goes out: a
   * reminder that was held up must not reach an approver who has decided meanwhile.
   */
  stillPending?: (approval: TrackedApproval) => Promise<boolean>;
  /** Told of each attempt's outcome (metrics). */
  onOutcome?: (outcome: AttemptOutcome, kind: string, ms: number) => void;
  random?: () => number;
  /** A monotonic clock in ms for attempt deadlines and lane spacing (tests move it by hand). */
  monotonic?: () => number;
}

export type { AttemptOutcome } from './delivery-attempt.ts';

export type { DispatchCounts } from './dispatch-loop.ts';

const BACKOFF_BASE_MS = 2000;
// A replica's own wait for a lane it posted to ends this much after the lane's lookahead window
// opens in the database, so that it does not look a moment too early and then idle.
const PACE_MARGIN_MS = 5;
const BACKOFF_MAX_MS = 10 * 60_000;
// After the store fails (a read, a claim, a record), the loop waits 500 ms, doubling to 30 s,
// jittered: a database that is away, full or locked is asked a few times a minute, not in a spin.
const STORE_BACKOFF = { baseMs: 500, maxMs: 30_000 };

/** How long the loop waits after `failures` store errors in a row: bounded, jittered (50–100 %). */
export function storeBackoffMs(failures: number, random: () => number = Math.random): number {
  return jitteredBackoffMs(failures, STORE_BACKOFF, random);
}

/**
 * How long to wait before attempt `attempts + 1`: exponential from 2 s, at most 10 minutes, with
 * jitter (50–100 %) so that many announcements failing together do not retry together.
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const exponential = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(exponential * (0.5 + random() / 2));
}

/**
 * Delivers the outbox exactly once, promptly and fairly, whatever the chat and the database do:
 * - **Outbox:** each fact and its announcements were stored in one transaction, so nothing is
 *   lost between deciding and posting; delivery runs apart from the poll pass.
 * - **Lanes:** each conversation (a channel, one person's DM: see conversation.ts) is a lane;
 *   lanes are served side by side, one post at a time per lane, spaced by `laneIntervalMs`, so
 *   one busy channel neither trips Slack's per-channel limit for long nor delays any other. A 429 pauses its lane for Retry-After.
 * - **Fenced leases:** an attempt claims its announcement for `leaseMs` on the database's clock
 *   with a token; only the current attempt may record the outcome, and no call starts after the
 *   attempt's deadline.
 * - **No duplicates:** a post carries the announcement id in its metadata. When an earlier attempt
 *   may have posted without recording it (it died, timed out, got a 5xx), the next one looks for
 *   that post first. The chat client never retries a post by itself.
 * - **No loss:** failures that may pass are retried with backoff for `retryForMs` (24 h by
 *   default); only failures that never can pass, or outlast that, end as `failed`, logged at error
 *   and re-drivable by an operator.
 */
export function createAnnouncementDispatcher(deps: DispatcherDeps, options: DispatcherOptions) {
  const random = deps.random ?? Math.random;
  const monotonic = deps.monotonic ?? (() => performance.now());
  const pacer = createLanePacer(options.laneIntervalMs, monotonic);
  const lookaheadMs = Math.max(0, Math.round(options.laneLookaheadMs ?? 0));
  const horizonMs = Math.max(0, Math.round(options.commitHorizonMs ?? 0));
  const waker = createWaker();
  const health = createStoreHealth(deps.logger, monotonic);
  const state: LoopState = { running: false, stopping: false, loop: undefined };
  const pauses = createPauseWatch(
    { ...deps, monotonic, resumed: waker.wake },
    options.pauseCheckMs ?? 30_000,
  );
  const deliverOne = createDeliveryAttempt(
    {
      ...deps,
      random,
      monotonic,
      pacer,
      stopping: () => state.stopping,
      pauseEverything: (reason, now) => pauses.pauseEverything(reason, now),
      retryDelayMs,
    },
    attemptSettings(options, lookaheadMs, horizonMs),
  );
  const lanes = createLaneFill({
    ...{ store: deps.store, pacer, lookaheadMs, concurrency: options.concurrency },
    ...{ deliverOne, health, wake: waker.wake },
  });
  const loop: Loop = { deps, options, random, pacer, waker, health, state, pauses, lanes };

  return {
    /** Runs delivery in the background until stop(). */
    start(): void {
      if (state.running) return;
      state.running = true;
      state.stopping = false;
      health.started();
      state.loop = run(loop);
    },
    /** Something new is in the outbox: look now rather than at the next idle check. */
    wake: waker.wake,
    /**
     * While delivery is paused, asks Slack whether the token works again and resumes when it
     * does; true while it stays paused. The background loop calls it every `pauseCheckMs`.
     */
    checkPause: () => pauses.checkPause(),
    /**
     * One pass at `now`: starts attempts for the heads of free lanes and waits for them. For tests
     * that drive time themselves; the background loop and drain() repeat it.
     */
    async pass(now: Date = deps.now()): Promise<DispatchCounts> {
      const counts = emptyCounts();
      const before = new Set(lanes.inFlight.values());
      await lanes.fill(now, counts);
      await Promise.all([...lanes.inFlight.values()].filter((p) => !before.has(p)));
      return counts;
    },
    /**
     * How long since the background loop last got an answer from the store (read the outbox, or
     * recorded an attempt's outcome), in ms: it grows only while delivery is stuck (the database
     * away, or a bug). Liveness and a gauge read it.
     */
    sinceProgressMs: (): number => (state.running ? health.sinceProgressMs() : 0),
    /** Stops the background delivery and waits for attempts under way. */
    async stop(): Promise<void> {
      state.running = false;
      state.stopping = true;
      waker.wake();
      await state.loop;
      await Promise.all(lanes.inFlight.values());
    },
    /**
     * Delivers everything deliverable at `now` (waiting out lane spacing and attempts under way in
     * this process) and returns what this call did. Announcements waiting for a retry later than
     * `now` are left for later. It stops early when the store fails an attempt: the background
     * loop tries again after its backoff.
     */
    drain: (now: Date = deps.now()): Promise<DispatchCounts> => drain(loop, now),
  };
}

interface LoopState {
  running: boolean;
  stopping: boolean;
  loop: Promise<void> | undefined;
}

/** What the background loop and drain() work with. */
interface Loop {
  deps: DispatcherDeps;
  options: DispatcherOptions;
  random: () => number;
  pacer: ReturnType<typeof createLanePacer>;
  waker: ReturnType<typeof createWaker>;
  health: StoreHealth;
  state: LoopState;
  pauses: ReturnType<typeof createPauseWatch>;
  lanes: LaneFill;
}

async function run(loop: Loop): Promise<void> {
  const { deps, options, waker, health, state, pauses, lanes, pacer } = loop;
  const counts = emptyCounts();
  while (state.running) {
    waker.clear();
    try {
      if (pauses.due()) await pauses.checkPause();
      await lanes.fill(deps.now(), counts);
    } catch (error) {
      health.failed(error, 'could not read the outbox; trying again after a pause');
    }
    if (!state.running) break;
    // Backing off, only a stop cuts the wait short: a wake-up (an attempt that failed too, a new
    // announcement) would have a store that keeps failing asked in a spin again.
    if (health.failuresInARow() > 0)
      await waker.idle(storeBackoffMs(health.failuresInARow(), loop.random), () => !state.running);
    // Woken: look again at once, but after the event loop has had its turn (better-sqlite3
    // answers synchronously, so a loop of reads and claims would otherwise never yield).
    else if (waker.woken()) await waker.idle(0, () => true);
    else
      await waker.idle(
        Math.min(options.idleMs, pacer.nextReadyInMs() ?? options.idleMs),
        () => true,
      );
  }
}

async function drain(loop: Loop, now: Date): Promise<DispatchCounts> {
  const { deps, health, pauses, lanes, pacer } = loop;
  const counts = emptyCounts();
  if (await pauses.checkPause()) return counts;
  const errorsBefore = health.errors();
  for (;;) {
    const started = await lanes.fill(now, counts);
    if (lanes.inFlight.size > 0) {
      await Promise.race(lanes.inFlight.values());
      // The store failed an attempt (logged): what is left waits for the background loop, which
      // backs off, instead of being claimed again at once.
      if (health.errors() > errorsBefore) {
        await Promise.all(lanes.inFlight.values());
        return counts;
      }
      continue;
    }
    if (started > 0) continue;
    const waiting = await deps.store.deliverable(now, {
      limit: 1,
      skipLanes: [],
      includeHeldLanes: true,
    });
    if (waiting.length === 0) return counts;
    // Only paced lanes (or another replica's held rows) are left: wait a little and look again.
    await new Promise((r) => setTimeout(r, pacer.nextReadyInMs() ?? 50));
  }
}

export type AnnouncementDispatcher = ReturnType<typeof createAnnouncementDispatcher>;

/** What one attempt needs of the dispatcher's options (lookahead and horizon as normalised). */
function attemptSettings(
  options: DispatcherOptions,
  lookaheadMs: number,
  horizonMs: number,
): AttemptSettings {
  return {
    leaseMs: options.leaseMs,
    callTimeoutMs: options.callTimeoutMs,
    laneIntervalMs: options.laneIntervalMs,
    lookaheadMs,
    paceMarginMs: PACE_MARGIN_MS,
    failures: {
      retryForMs: options.retryForMs,
      ...(options.retryAfterMaxMs !== undefined
        ? { retryAfterMaxMs: options.retryAfterMaxMs }
        : {}),
      laneIntervalMs: options.laneIntervalMs,
      commitHorizonMs: horizonMs,
    },
  };
}
