import cron from 'node-cron';

export interface ScheduledJob<T> {
  /** Runs the job now, or joins the run already going: runs never overlap. */
  runOnce(now: Date): Promise<T | undefined>;
  /** Stops the ticks, tells a running run to stop (its signal) and waits for it. */
  stop(): Promise<void>;
}

/**
 * A job on a node-cron schedule that never overlaps itself: a tick while a run is going is
 * skipped. A failed run is logged at warn with `failedMessage` and answers undefined; the next
 * tick tries again. Each run gets the job's stop signal: aborted by stop(), it claims nothing new
 * and ends once what it has under way is done.
 */
export function scheduleJob<T>(
  expression: string,
  run: (now: Date, stop: AbortSignal) => Promise<T>,
  options: {
    clock: () => Date;
    logger: { warn(obj: object, msg: string): void };
    failedMessage: string;
  },
): ScheduledJob<T> {
  let running: Promise<T | undefined> | undefined;
  const stopping = new AbortController();
  const runOnce = (now: Date) => {
    running ??= run(now, stopping.signal)
      .catch((error: unknown) => {
        options.logger.warn(
          { error: error instanceof Error ? error.message : String(error) },
          options.failedMessage,
        );
        return undefined;
      })
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
    if (!running) void runOnce(wholeSecond(options.clock()));
  });
  return {
    runOnce,
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
