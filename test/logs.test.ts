import { describe, expect, it } from 'vitest';
import { type Harness, harnessPerTest, waitFor } from './helpers/harness.ts';

// One approval and one request can be followed through the logs: every line written while a
// Slack request is handled carries its id, every line about an approval carries its number.

const harness = harnessPerTest();

describe('traceable logs', () => {
  it('stamps each request’s lines with its id and each approval’s lines with its djbh', async () => {
    const h = await harness({ env: { LOG_LEVEL: 'debug' } });
    // A first post that fails, so the background delivery has something to say about the approval
    // (one Slack surely did not carry out: after an internal_error the retry would wait a minute).
    h.workspace.failNext('chat.postMessage', 'service_unavailable');
    const { approval } = await h.startApproval();
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    const lines = h.logs.entries();

    const submission = lines.find((l) => l.msg === 'slack request' && l.kind === 'view_submission');
    const viewId = [...h.workspace.views.keys()].at(-1);
    expect(submission?.requestId).toBe(viewId);
    const command = lines.find((l) => l.msg === 'slack request' && l.kind === '/approve');
    expect(String(command?.requestId)).toMatch(/\S/);
    expect(command?.requestId).not.toBe(viewId);

    const started = lines.find((l) => l.msg === 'approval started');
    expect(started).toMatchObject({ requestId: viewId, djbh: approval.djbh });

    // Every line that mentions the approval anywhere names it in its own field.
    const aboutIt = lines.filter((l) => JSON.stringify(l).includes(approval.djbh));
    expect(aboutIt.length).toBeGreaterThan(2);
    for (const line of aboutIt) expect(line.djbh, JSON.stringify(line)).toBe(approval.djbh);
    // A request's id ends with the request: the decision's check and delivery, after it, are
    // background work and carry no request id (not even that of the request that woke them).
    const closing = lines.indexOf(submission as Record<string, unknown>);
    for (const line of lines.slice(closing + 1).filter((l) => aboutIt.includes(l)))
      expect(line.requestId, JSON.stringify(line)).toBeUndefined();
    expect(lines.slice(closing + 1).filter((l) => aboutIt.includes(l)).length).toBeGreaterThan(0);
    for (const line of lines.filter((l) => l.requestId === viewId))
      expect(lines.indexOf(line)).toBeLessThanOrEqual(closing);
  });
});

describe('following one approval at the default level', () => {
  const HOUR = 3_600_000;

  /** The info lines about one approval (its request's own `slack request` line aside). */
  function storyOf(h: Harness, djbh: string) {
    let seen = 0;
    return () => {
      const all = h.logs
        .entries()
        .filter((l) => l.djbh === djbh && l.level === 30 && l.msg !== 'slack request')
        .map((l) => (l.announcement ? `${l.msg}: ${l.announcement}` : String(l.msg)));
      const fresh = all.slice(seen);
      seen = all.length;
      return fresh;
    };
  }
  const sorted = (lines: string[]) => [...lines].sort();

  it('logs each step of an approval at info, each line carrying its number, in order', async () => {
    const h = await harness({
      env: {
        LOG_LEVEL: 'info',
        REMINDER_AFTER_HOURS: '1',
        REMINDER_INTERVAL_HOURS: '1',
        REMINDER_MAX: '2',
        ESCALATE_AFTER_REMINDERS: '2',
      },
    });
    const { approval } = await h.startApproval('alex.kim@corp.example');
    const n = approval.djbh;
    const next = storyOf(h, n);
    await h.app.deliver();
    const started = next();
    // Started first; the request and the approver's DM go out side by side (two lanes), then the
    // DM is edited to link the thread.
    expect(started[0]).toBe('approval started');
    expect(sorted(started.slice(1))).toEqual([
      `announcement delivered: ${n}:approver-dm`,
      `announcement delivered: ${n}:approver-dm-update:thread`,
      `announcement delivered: ${n}:request`,
    ]);

    const t0 = Date.now();
    for (const [hours, occurrence] of [
      [1.1, 1],
      [2.2, 2],
    ] as const) {
      await h.app.poll(new Date(t0 + hours * HOUR));
      // The check records it; the note in the thread waits for the DM.
      expect(next()).toEqual([
        'reminder due: the approver is reminded',
        `announcement delivered: ${n}:reminder:${occurrence}`,
        `announcement delivered: ${n}:reminder-note:${occurrence}`,
      ]);
    }
    await h.app.poll(new Date(t0 + 3.3 * HOUR));
    expect(next()).toEqual([
      'escalated to the approver’s leader',
      `announcement delivered: ${n}:escalation:2`,
      `announcement delivered: ${n}:escalation-note:2`,
    ]);

    h.sim.decide(n, 'agree');
    await h.app.poll(new Date(t0 + 4 * HOUR));
    const decided = next();
    expect(decided[0]).toBe('approval status changed');
    expect(sorted(decided.slice(1))).toEqual([
      `announcement delivered: ${n}:approver-dm-update:approved`,
      `announcement delivered: ${n}:decision:approved`,
      `announcement delivered: ${n}:parent-update:approved`,
    ]);
    const change = h.logs.entries().find((l) => l.msg === 'approval status changed');
    expect(change).toMatchObject({ djbh: n, from: 'pending', decision: 'approved' });
  });

  it('logs a reminder dropped at info and an announcement given up at error, with the number', async () => {
    const h = await harness({
      env: { LOG_LEVEL: 'info', REMINDER_AFTER_HOURS: '1', REMINDER_MAX: '1' },
    });
    const { approval } = await h.startApproval('alex.kim@corp.example');
    const n = approval.djbh;
    await h.app.deliver();
    const next = storyOf(h, n);
    next();
    const t0 = Date.now();
    // The reminder is recorded but Slack fails its first post; the approver decides meanwhile.
    h.workspace.failNext('chat.postMessage', 'internal_error');
    await h.app.poll(new Date(t0 + 1.1 * HOUR));
    expect(next()).toEqual(['reminder due: the approver is reminded']);
    h.sim.decide(n, 'agree');
    // Slack refuses the decision's post for good.
    h.workspace.failNext('chat.postMessage', 'invalid_blocks');
    await h.app.poll(new Date(t0 + 1.5 * HOUR));
    const decided = next();
    expect(decided[0]).toBe('approval status changed');
    // The reminder and its note are dropped; the decision's post fails for good (below).
    expect(sorted(decided.slice(1))).toEqual([
      `announcement delivered: ${n}:approver-dm-update:approved`,
      `announcement delivered: ${n}:parent-update:approved`,
      `announcement skipped: decided before it went out: ${n}:reminder-note:1`,
      `announcement skipped: decided before it went out: ${n}:reminder:1`,
    ]);
    const failed = h.logs
      .entries()
      .filter((l) => String(l.msg).startsWith('announcement failed for good'));
    expect(failed).toMatchObject([{ level: 50, djbh: n, announcement: `${n}:decision:approved` }]);
  });

  it('names the approvals that changed in the poll pass line', async () => {
    const h = await harness({ env: { LOG_LEVEL: 'info', STATUS_POLL_CRON: '* * * * * *' } });
    const { approval } = await h.startApproval();
    h.sim.decide(approval.djbh, 'agree');
    const pass = await waitFor(
      () =>
        h.logs
          .entries()
          .find((l) => l.msg === 'poll pass' && Array.isArray(l.changedDjbhs) && l.changed === 1),
      10_000,
      'a poll pass that saw the decision',
    );
    expect(pass).toMatchObject({ level: 30, changed: 1, changedDjbhs: [approval.djbh] });
  });
});

describe('personal data in the logs', () => {
  const TITLE = 'Termination of J. Doe';
  const NOTE = 'For the Q3 expansion';

  /** Every e-mail address anywhere in the log. */
  const emailsIn = (lines: string[]) =>
    new Set(lines.flatMap((l) => [...l.matchAll(/[\w.+-]+@[\w-]+(\.[\w-]+)+/g)].map((m) => m[0])));

  async function approvalAtDebug(env: Record<string, string>) {
    const h = await harness({ env: { LOG_LEVEL: 'debug', ...env } });
    const { approval } = await h.startApproval('sam.taylor@corp.example', 'general', TITLE);
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    await h.app.deliver();
    return h.logs.lines;
  }

  it('writes no title, note or e-mail at debug but the login of whoever decided', async () => {
    const lines = await approvalAtDebug({});
    // Slack's client wrote every request and response body at debug: the title and note it posts,
    // and the requester's e-mail it reads from users.info.
    expect(lines.filter((l) => l.includes(TITLE) || l.includes(NOTE))).toEqual([]);
    expect([...emailsIn(lines)]).toEqual(['maria.lopez@corp.example']);
    expect(lines.find((l) => l.includes('decidedBy'))).toContain('maria.lopez@corp.example');
    // The Web API's calls are still followed, by method.
    expect(lines.some((l) => l.includes("apiCall('chat.postMessage') start"))).toBe(true);
  });

  it('writes Slack’s bodies at debug only when LOG_SLACK_BODIES asks for them', async () => {
    const lines = await approvalAtDebug({ LOG_SLACK_BODIES: 'true' });
    expect(lines.some((l) => l.includes(TITLE))).toBe(true);
    expect(emailsIn(lines).has('sam.taylor@corp.example')).toBe(true);
  });
});
