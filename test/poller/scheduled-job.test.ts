import { describe, expect, it } from 'vitest';
import { scheduleJob } from '../../src/poller/scheduled-job.ts';

describe('a scheduled job', () => {
  it("runs each tick at its slot's whole second, whatever the replica's clock adds, so replicas of one tick share `now`", async () => {
    const seen: Date[] = [];
    const clocks = [0, 137, 610].map((skewMs) => () => new Date(Date.now() + skewMs));
    // Three replicas with skewed clocks (each fires by its own clock, as cron does).
    const jobs = clocks.map((clock) =>
      scheduleJob(
        '* * * * * *',
        async (now) => {
          seen.push(now);
        },
        { clock, logger: { warn() {} }, failedMessage: 'failed' },
      ),
    );
    await expect.poll(() => seen.length, { timeout: 5000 }).toBeGreaterThanOrEqual(3);
    await Promise.all(jobs.map((job) => job.stop()));
    for (const now of seen) expect(now.getMilliseconds()).toBe(0);
  });
});
