import cron from 'node-cron';
import { type PollCounts, type PollDeps, type PollOptions, pollOnce } from './poll-once.ts';

export interface PollSchedule {
  stop(): Promise<void>;
}

/**
 * Runs pollOnce on the node-cron schedule. A pass never overlaps the previous one: a tick that
 * comes while a pass is running is skipped. `stop` waits for a running pass to finish.
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
  let running: Promise<PollCounts | undefined> | undefined;
  const task = cron.schedule(options.cron, () => {
    if (running) return;
    const started = clock();
    running = pollOnce(deps, options, started)
      .then((counts) => {
        // Quiet passes go to debug, so a log at info shows only passes that did something.
        const busy = counts.checked + counts.failed + counts.deferred > 0;
        const ms = Date.now() - started.getTime();
        deps.logger[busy ? 'info' : 'debug']({ ...counts, ms }, 'poll pass');
        options.onPass?.(ms);
        return counts;
      })
      .catch((error: unknown) => {
        deps.logger.warn(
          { error: error instanceof Error ? error.message : String(error) },
          'poll pass failed',
        );
        return undefined;
      })
      .then(async (counts) => {
        await options.alongside?.(started).catch((error: unknown) => {
          deps.logger.warn(
            { error: error instanceof Error ? error.message : String(error) },
            'work alongside the poll pass failed',
          );
        });
        return counts;
      })
      .finally(() => {
        running = undefined;
      });
  });
  return {
    async stop() {
      await task.stop();
      await running;
    },
  };
}
