import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.ts';
import { harnessPerTest, waitFor } from '../helpers/harness.ts';

// While the database refuses writes (here: another process holds SQLite's write lock for longer
// than the app waits for it, as a lock held by someone's long query, a full disk or a failover
// would), Slack is still answered in time, the person is told the app cannot start approvals
// right now, and nothing half-done is stored or started.

const harness = harnessPerTest();

/** Another process takes the write lock and holds it until told to let go. */
async function holdWriteLock(path: string): Promise<{ release(): Promise<unknown> }> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked');
    process.stdin.once('data', () => { db.exec('ROLLBACK'); db.close(); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script, path], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve) => child.stdout?.once('data', resolve));
  return {
    release: () => {
      child.stdin?.write('go\n');
      return exited;
    },
  };
}

describe('a database that refuses writes', { timeout: 240_000 }, () => {
  it('answers the form in time, says approvals cannot start right now, starts and stores nothing, and starts it once the database writes again', async () => {
    const h = await harness();
    const view = await h.openModal('sam.taylor@corp.example');
    const lock = await holdWriteLock(h.env.DATABASE_URL);
    let released = false;
    try {
      const { response, errors } = await h.slack.submitView(view.id, { note_input: 'n' });
      // Acknowledged without waiting for the database: no field errors, the form says "submitting".
      expect(response.status).toBe(200);
      expect(errors).toBeUndefined();
      await waitFor(
        () =>
          JSON.stringify(h.workspace.views.get(view.id)?.view ?? {}).includes(
            'cannot start approvals right now',
          ),
        15_000,
        'the form back with the reason',
      );
      expect(h.sim.approvals()).toEqual([]);
      await lock.release();
      released = true;
      const db = await openDatabase(h.env.DATABASE_URL, { migrate: false });
      try {
        expect(await db.db.selectFrom('tracked_approvals').selectAll().execute()).toEqual([]);
        expect(await db.db.selectFrom('announcements').selectAll().execute()).toEqual([]);
      } finally {
        await db.close();
      }
      // The database writes again: the same form, submitted again, starts the approval.
      await h.slack.submitView(view.id, { note_input: 'n' });
      await waitFor(() => h.sim.approvals()[0], 120_000, 'the approval in the service');
    } finally {
      if (!released) await lock.release();
    }
  }, 240_000);
});
