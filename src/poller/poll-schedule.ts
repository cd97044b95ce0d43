import { type PollCounts, type PollDeps, type PollOptions, pollOnce } from './poll-once.ts';
import { scheduleJob } from './scheduled-job.ts';

export interface PollSchedule {
  stop(): Promise<void>;
  /** How long the pass under way has been going, in ms; 0 when none is. */
  runningForMs(): number;
}

/**
 * Runs pollOnce on the node-cron schedule. A pass never overlaps the previous one: a tick that
 * comes while a pass is running is skipped. `stop` tells a running pass to stop (it claims
 * nothing more and finishes the checks under way) and waits for it.
 */
export function startPollSchedule(
  deps: PollDeps,
  options: PollOptions & {
    cron: string;
    onPass?: (ms: number) => void;
    /** Other periodic work run after each pass, at the same `now`; a failure is only logged. */
    alongside?: (now: Date) => Promise<unknown>;
  },
  clock: () => Date = () => new Date(),
): PollSchedule {
  const logFailure = (what: string) => (error: unknown) => {
    deps.logger.warn({ error: error instanceof Error ? error.message : String(error) }, what);
    return undefined;
  };
  return scheduleJob(
    options.cron,
    async (started, stop): Promise<PollCounts | undefined> => {
      let failed: { error: unknown } | undefined;
      const counts = await pollOnce(deps, options, started, stop).then(
        (counts) => {
          // Quiet passes go to debug, so a log at info shows only passes that did something.
          const busy = counts.checked + counts.failed + counts.deferred > 0;
          const ms = Date.now() - started.getTime();
          deps.logger[busy ? 'info' : 'debug']({ ...counts, ms }, 'poll pass');
          options.onPass?.(ms);
          return counts;
        },
        (error: unknown) => {
          failed = { error };
          return undefined;
        },
      );
      if (!stop.aborted)
        await options.alongside?.(started).catch(logFailure('work alongside the poll pass failed'));
      // A failed pass (the database away) is logged by the schedule, which backs off from it.
      if (failed) throw failed.error;
      return counts;
    },
    { clock, logger: deps.logger, failedMessage: 'poll pass failed' },
  );
}
