import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_WORKING_HOURS,
  isWorkingTime,
  nextWorkingStart,
} from '../../src/approvals/working-hours.ts';
import { waitFor } from '../helpers/harness.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/test-sandbox.ts';

// Working hours as the sandbox shows them: its people are in Shanghai except Priya Nair, in Los
// Angeles; a reminder to her waits for her morning there. The sandbox's page calls and its app's
// poll pass at chosen moments (the sandbox reminds after a minute).

let page: TestSandbox;

beforeAll(async () => {
  // Its own passes (every 2 s, and the hot pass) off: one under way holds the approval's claim,
  // and the test's pass at a chosen moment would find nothing to check (on a busy machine,
  // where a pass takes longer, it often did).
  page = await startTestSandbox({}, { STATUS_POLL_CRON: '0 0 1 1 *', HOT_POLL_CRON: 'off' });
});
afterAll(async () => {
  await page?.close();
});

const LA = 'America/Los_Angeles';
const MINUTE = 60_000;

describe('working hours in the sandbox', () => {
  it('shows each person’s time zone, and reminds Priya in Los Angeles only in her working hours', async () => {
    const { sandbox } = page;
    const liu = sandbox.workspace.userByLogin('liu.yang@corp.example').id;
    const priya = sandbox.workspace.userByLogin('priya.nair@corp.example').id;
    const people = (
      (await fetch(`${sandbox.url}/sandbox/api/state?user=${liu}`).then((r) => r.json())) as {
        people: Array<{ id: string; timeZone: string }>;
      }
    ).people;
    expect(people.find((p) => p.id === priya)?.timeZone).toBe(LA);
    expect(people.find((p) => p.id === liu)?.timeZone).toBe('Asia/Shanghai');

    // Liu asks Priya, their leader.
    await page.post('/sandbox/api/message', {
      user: liu,
      channel: sandbox.workspace.channelByName('general').id,
      text: '/approve Team offsite',
    });
    // Filled in (Liu reads Chinese): the approver lookup is done.
    const view = await waitFor(async () =>
      (await page.state(liu)).views.find(
        (v) =>
          JSON.stringify(v.view).includes('"lookup"') &&
          !JSON.stringify(v.view).includes('hourglass'),
      ),
    );
    await page.post(`/sandbox/api/views/${view.id}/submit`, {
      values: { title_input: 'Team offsite', note_input: 'Two days in March' },
    });
    const approval = await waitFor(() =>
      sandbox.simulator.approvals().find((a) => a.title === 'Team offsite'),
    );
    expect(approval.approver).toBe('priya.nair@corp.example');
    await sandbox.app.deliver();
    const reminders = async () =>
      (await page.state(priya)).messages.filter((m) => m.text.includes('Reminder:'));

    // A moment after the first reminder is due that is outside her hours in Los Angeles.
    let off = new Date(Date.now() + 2 * MINUTE);
    while (isWorkingTime(off, LA, DEFAULT_WORKING_HOURS))
      off = new Date(off.getTime() + 15 * MINUTE);
    await sandbox.app.poll(off);
    expect(await reminders()).toHaveLength(0);

    // Her next working start there.
    const start = nextWorkingStart(off, LA, DEFAULT_WORKING_HOURS);
    if (!start) throw new Error('no working start');
    const pass = await sandbox.app.poll(new Date(start.getTime() + MINUTE));
    expect(pass.reminded).toBe(1);
    expect(await reminders()).toHaveLength(1);
  });
});
