import { type PollCounts, type PollDeps, type PollOptions, pollOnce } from './poll-once.ts';
import { scheduleJob } from './scheduled-job.ts';

export interface PollSchedule {
  stop(): Promise<void>;
}

/**
 * Runs pollOnce on the node-cron schedule. A pass never overlaps the previous one: a tick that
 * comes while a pass is running is skipped. `stop` waits for a running pass to finish.
 */
export function startPollSchedule(
  deps: PollDeps,
  options: PollOptions & { cron: string; onPass?: (ms: number) => void },
  clock: () => Date = () => new Date(),
): PollSchedule {
  return scheduleJob(
    options.cron,
    async (started): Promise<PollCounts> => {
      const counts = await pollOnce(deps, options, started);
      // Quiet passes go to debug, so a log at info shows only passes that did something.
      const busy = counts.checked + counts.failed + counts.deferred > 0;
      const ms = Date.now() - started.getTime();
      deps.logger[busy ? 'info' : 'debug']({ ...counts, ms }, 'poll pass');
      options.onPass?.(ms);
      return counts;
    },
    { clock, logger: deps.logger, failedMessage: 'poll pass failed' },
  );
}
