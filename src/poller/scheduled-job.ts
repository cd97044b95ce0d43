import cron from 'node-cron';
import { jitteredBackoffMs } from '../backoff.ts';
import { describe } from '../errors.ts';

export interface ScheduledJob<T> {
  /** Runs the job now, or joins the run already going: runs never overlap. */
  runOnce(now: Date): Promise<T | undefined>;
  /** Stops the ticks, tells a running run to stop (its signal) and waits for it. */
  stop(): Promise<void>;
  /** How long the run under way has been going, in ms; 0 when none is (for liveness). */
  runningForMs(): number;
}

// After failed runs in a row the ticks are skipped for 5 s, doubling to at most a minute,
// jittered: a database that is away is asked a few times a minute by each job, not at every tick.
const FAILED_BACKOFF = { baseMs: 5000, maxMs: 60_000 };

/** How long ticks are skipped after `failures` failed runs in a row: bounded, jittered (50–100 %). */
export function failedRunBackoffMs(failures: number, random: () => number = Math.random): number {
  return jitteredBackoffMs(failures, FAILED_BACKOFF, random);
}

/**
 * A job on a node-cron schedule that never overlaps itself: a tick while a run is going is
 * skipped. A failed run is logged at warn with `failedMessage` and answers undefined; ticks are
 * then skipped for a backoff (`backoffMs`, by default failedRunBackoffMs) that grows while runs
 * keep failing, and the first tick after it tries again. Each run gets the job's stop signal:
 * aborted by stop(), it claims nothing new and ends once what it has under way is done.
 */
export function scheduleJob<T>(
  expression: string,
  run: (now: Date, stop: AbortSignal) => Promise<T>,
  options: {
    clock: () => Date;
    logger: { warn(obj: object, msg: string): void };
    failedMessage: string;
    /** How long ticks are skipped after `failures` failed runs in a row. */
    backoffMs?: (failures: number) => number;
  },
): ScheduledJob<T> {
  const backoffMs = options.backoffMs ?? ((failures: number) => failedRunBackoffMs(failures));
  let running: Promise<T | undefined> | undefined;
  let runningSince = 0;
  let failures = 0;
  let skipUntil = 0;
  const stopping = new AbortController();
  const runOnce = (now: Date) => {
    if (!running) runningSince = performance.now();
    running ??= run(now, stopping.signal)
      .then(
        (result) => {
          failures = 0;
          return result;
        },
        (error: unknown) => {
          failures++;
          const waitMs = backoffMs(failures);
          skipUntil = performance.now() + waitMs;
          const { message, code } = describe(error);
          options.logger.warn(
            {
              error: message,
              code,
              failuresInARow: failures,
              nextTryInMs: waitMs,
            },
            options.failedMessage,
          );
          return undefined;
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const task = cron.schedule(expression, () => {
    // The tick's slot, not the moment this replica got to it: cron fires each replica just after
    // the slot's second by its own clock, so every replica's run of one tick has the same `now`,
    // and a poll pass's "checked at now already" holds across them (a fresh approval, due at
    // every tick, is checked once per tick by the fleet, not once per replica).
    if (!running && performance.now() >= skipUntil) void runOnce(wholeSecond(options.clock()));
  });
  return {
    runOnce,
    runningForMs: () => (running ? performance.now() - runningSince : 0),
    async stop() {
      await task.stop();
      stopping.abort();
      await running;
    },
  };
}

function wholeSecond(at: Date): Date {
  return new Date(Math.floor(at.getTime() / 1000) * 1000);
}
