import type { Logger } from 'pino';
import {
  type PurgeCounts,
  purgeExpired,
  type RetentionOptions,
  type RetentionStore,
} from '../approvals/retention.ts';
import { type ScheduledJob, scheduleJob } from './scheduled-job.ts';

// Every hour, at an odd minute; the daily claim makes all but one tick a day (fleet-wide) no-ops.
const HOURLY = '17 * * * *';

/**
 * The retention purge on a schedule: each replica ticks hourly and the one that claims the day's
 * run deletes what has expired (see approvals/retention.ts). A failure is logged and tried again
 * at the next tick; `runOnce` runs it now (tests), `stop` ends a running purge at its next batch.
 */
export function startRetentionSchedule(
  deps: { store: RetentionStore; logger: Logger; onPurge?: (counts: PurgeCounts) => void },
  options: RetentionOptions,
  clock: () => Date,
): ScheduledJob<PurgeCounts | undefined> {
  const job = scheduleJob(
    HOURLY,
    async (now, stop) => {
      const counts = await purgeExpired(deps.store, options, now, () => stop.aborted);
      if (counts) {
        deps.logger.info({ ...counts, retentionDays: options.retentionDays }, 'retention purge');
        deps.onPurge?.(counts);
      }
      return counts;
    },
    {
      clock,
      logger: deps.logger,
      failedMessage: 'retention purge failed; the next tick tries again',
    },
  );
  // A purge under way stops at its next batch (the job's stop signal); the rest goes at the next
  // tick of some replica.
  return job;
}
