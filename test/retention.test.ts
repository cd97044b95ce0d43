import { describe, expect, it } from 'vitest';
import { createApprovalStores } from '../src/store/approval-stores.ts';
import { openDatabase } from '../src/store/database.ts';
import { harnessPerTest } from './helpers/harness.ts';

// The retention purge in the running app: what it deletes, counted in metrics and logged.

const harness = harnessPerTest();
const DAY = 24 * 3_600_000;

describe('retention', () => {
  it('forgets an ended approval RETENTION_DAYS after it ended, counts it and logs it once', async () => {
    let clock = new Date();
    const h = await harness({ now: () => clock, env: { RETENTION_DAYS: '30', ADMIN_PORT: '0' } });
    const { approval } = await h.startApproval();
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    // Before its time nothing goes; the day's run is then taken.
    clock = new Date(clock.getTime() + 29 * DAY);
    expect(await h.app.purge()).toMatchObject({ approvals: 0 });
    const outbox = async () =>
      [
        ...(await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text()).matchAll(
          /^slack_approvals_announcements\{[^}]*\} (\d+)$/gm,
        ),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
    const recorded = await outbox();
    expect(recorded).toBeGreaterThan(2);
    clock = new Date(clock.getTime() + 2 * DAY);
    expect(await h.app.purge()).toMatchObject({ approvals: 1, announcements: recorded });
    expect(await outbox()).toBe(0);
    expect(await h.app.purge()).toBeUndefined();

    const metrics = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    expect(metrics).toContain('slack_approvals_retention_deleted_total{what="approvals"} 1');
    const purges = h.logs.entries().filter((e) => e.msg === 'retention purge');
    expect(purges.map((e) => e.approvals)).toEqual([0, 1]);
    // Nothing of the approval's text reached the log.
    expect(h.logs.lines.join('\n')).not.toContain('For the Q3 expansion');

    const database = await openDatabase(h.env.DATABASE_URL);
    try {
      const store = createApprovalStores(database.db, database.dialect);
      expect(await store.getApproval(approval.djbh)).toBeUndefined();
    } finally {
      await database.close();
    }
  });
});
