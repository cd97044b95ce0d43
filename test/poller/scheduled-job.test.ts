import { describe, expect, it } from 'vitest';
import { createLiveness, POLL_LOOP } from '../../src/liveness.ts';
import { failedRunBackoffMs, scheduleJob } from '../../src/poller/scheduled-job.ts';

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

  it('skips ticks for a while after a failed run (the database away), and logs what failed and for how long it waits', async () => {
    let failing = 0;
    let ticks = 0;
    const warnings: object[] = [];
    const failingJob = scheduleJob(
      '* * * * * *',
      async () => {
        failing++;
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      },
      {
        clock: () => new Date(),
        logger: { warn: (obj) => warnings.push(obj) },
        failedMessage: 'failed',
        backoffMs: () => 60_000,
      },
    );
    // A job on the same beat counts the ticks.
    const beat = scheduleJob(
      '* * * * * *',
      async () => {
        ticks++;
      },
      { clock: () => new Date(), logger: { warn() {} }, failedMessage: 'failed' },
    );
    try {
      await expect.poll(() => failing, { timeout: 5000 }).toBe(1);
      const ticksAtFailure = ticks;
      await expect
        .poll(() => ticks, { timeout: 10_000 })
        .toBeGreaterThanOrEqual(ticksAtFailure + 3);
      expect(failing).toBe(1);
      expect(warnings[0]).toMatchObject({
        error: 'database or disk is full',
        code: 'SQLITE_FULL',
        failuresInARow: 1,
        nextTryInMs: 60_000,
      });
    } finally {
      await Promise.all([failingJob.stop(), beat.stop()]);
    }
  });

  it('says how long its run under way has been going (0 when none), so liveness sees a pass that hangs', async () => {
    let release: () => void = () => {};
    const job = scheduleJob(
      '0 0 1 1 *',
      () => new Promise<void>((resolve) => (release = resolve)),
      { clock: () => new Date(), logger: { warn: () => {} }, failedMessage: 'failed' },
    );
    try {
      expect(job.runningForMs()).toBe(0);
      const run = job.runOnce(new Date());
      await new Promise((r) => setTimeout(r, 60));
      expect(job.runningForMs()).toBeGreaterThanOrEqual(50);
      release();
      await run;
      expect(job.runningForMs()).toBe(0);
    } finally {
      await job.stop();
    }
  });

  it('fails liveness for a poll pass running past its lease by more than the limit', () => {
    const errors: object[] = [];
    const liveness = createLiveness(1000, { error: (o) => errors.push(o), info: () => {} });
    let runningFor = 0;
    const leaseMs = 5000;
    liveness.watch(POLL_LOOP, () => Math.max(0, runningFor - leaseMs));
    runningFor = 5500; // within its lease and the limit past it
    expect(liveness.stuck()).toEqual([]);
    runningFor = 6500; // 1.5 s past its lease: stuck
    expect(liveness.stuck()).toEqual([{ loop: 'checks', ms: 1500 }]);
    expect(errors).toHaveLength(1);
  });

  it('backs off from failed runs from 5 s to at most a minute, with jitter between half and all', () => {
    expect(failedRunBackoffMs(1, () => 1)).toBe(5000);
    expect(failedRunBackoffMs(1, () => 0)).toBe(2500);
    expect(failedRunBackoffMs(3, () => 1)).toBe(20_000);
    expect(failedRunBackoffMs(50, () => 1)).toBe(60_000);
  });
});
