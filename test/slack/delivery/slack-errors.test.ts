import { describe, expect, it } from 'vitest';
import { announcementsCommand } from '../../../src/operator/announcements-command.ts';
import { SlackApiError } from '../../../src/sandbox/workspace.ts';
import { announcementStates } from '../../../src/store/announcement-states.ts';
import { createApprovalStores } from '../../../src/store/approval-stores.ts';
import { openDatabase } from '../../../src/store/database.ts';
import { type Harness, harnessPerTest, waitFor } from '../../helpers/harness.ts';

// The outbox against the Slack stand-in, one test per class of Slack's errors (slack-errors.ts)
// and for the faults an outside review found: a search that fails must not clear the doubt about
// an earlier post, a re-drive searches from the first attempt, a refused token pauses everything.

const harness = harnessPerTest();
const MINUTE = 60_000;

function movableClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance(ms: number) {
      offset += ms;
    },
  };
}

const replies = (h: Harness, parent: { channel: string; ts: string }, text: string) =>
  h.workspace.replies(parent.channel, parent.ts).filter((m) => m.text.includes(text));

async function storeOf(h: Harness) {
  const db = await openDatabase(h.env.DATABASE_URL);
  return {
    store: createApprovalStores(db.db, db.dialect),
    states: (ids: readonly string[]) => announcementStates(db.db, ids),
    close: () => db.close(),
  };
}

async function stateOf(h: Harness, id: string): Promise<string | undefined> {
  const { store, close } = await storeOf(h);
  try {
    if ((await store.failedAnnouncements(1000)).some((a) => a.id === id)) return 'failed';
    if ((await store.pendingAnnouncements(1000)).some((a) => a.id === id)) return 'pending';
    // Sent with a post, or delivered by posting nothing (an edit with nothing left to edit).
    return (await store.sentPost(id)) ? 'sent' : 'delivered';
  } finally {
    await close();
  }
}

describe('rate limits', () => {
  it('takes a 429 whose Retry-After is an HTTP date as rate-limited: nothing was posted, so nothing is searched for', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now });
    const { approval, parent } = await h.startApproval();
    // RFC 9110 allows a date; Slack's client reads only seconds and throws a plain error.
    h.faults.rateLimit('chat.postMessage', new Date(Date.now() + 2000).toUTCString());
    const searches: string[] = [];
    h.workspace.beforeCall = (method) => {
      if (method === 'conversations.replies' || method === 'conversations.history')
        searches.push(method);
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    expect(h.faults.rateLimited.length).toBe(1);
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(searches).toEqual([]);
  });
});

describe('doubt about an earlier post', () => {
  it('keeps looking for the post while the search itself is rate-limited, and posts once', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now });
    const { approval, parent } = await h.startApproval();
    // Slack takes the reply but answers 503; the next attempt's search answers 429.
    h.faults.failAfterCommit('chat.postMessage', 503);
    h.faults.rateLimit('conversations.replies', 1);
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    expect(h.faults.rateLimited.length).toBe(1);
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(await stateOf(h, `${approval.djbh}:decision:approved`)).toBe('sent');
  });

  it('searches from the first attempt when an announcement is re-driven hours later, and posts once', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now });
    const { approval, parent } = await h.startApproval();
    // Slack takes the reply but answers 503; the search then fails for good, so the
    // announcement fails while it may be posted.
    h.faults.failAfterCommit('chat.postMessage', 503);
    h.workspace.beforeCall = (method) => {
      if (method === 'conversations.replies') throw new SlackApiError('invalid_ts_oldest');
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    const id = `${approval.djbh}:decision:approved`;
    await waitFor(async () => (await stateOf(h, id)) === 'failed', 10_000, 'the failure');
    h.workspace.beforeCall = undefined;
    clock.advance(5 * 3_600_000);
    const { store, states, close } = await storeOf(h);
    await announcementsCommand(['redrive', id], { store, states, now: clock.now, out: () => {} });
    await close();
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(await stateOf(h, id)).toBe('sent');
  });
});

describe('a token Slack refuses', () => {
  it('pauses all delivery, fails nothing, says so once, and resumes once auth.test passes', async () => {
    const h = await harness({ env: { ADMIN_PORT: '0' } });
    const { approval, parent } = await h.startApproval();
    let revoked = true;
    h.workspace.beforeCall = () => {
      if (revoked) throw new SlackApiError('token_revoked');
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    await h.app.deliver();
    await h.app.deliver();
    const id = `${approval.djbh}:decision:approved`;
    expect(await stateOf(h, id)).toBe('pending');
    const pausedLines = h.logs.entries().filter((e) => e.level === 50);
    expect(pausedLines).toHaveLength(1);
    expect(pausedLines[0]?.msg).toContain('all delivery is paused');
    const metrics = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    expect(metrics).toContain('slack_approvals_delivery_paused 1');
    // While paused, nothing but auth.test is called.
    const before = h.workspace.calls.length;
    await h.app.deliver();
    // (The form's own views.update may still arrive: it is not the outbox.)
    const outboxCalls = h.workspace.calls
      .slice(before)
      .filter((c) => !c.method.startsWith('views.'));
    expect(outboxCalls.map((c) => c.method)).toEqual(['auth.test']);
    revoked = false;
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(await stateOf(h, id)).toBe('sent');
    const after = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    expect(after).toContain('slack_approvals_delivery_paused 0');
  });
});

describe('each class of Slack error', () => {
  it('retries what may pass (service_unavailable) and posts once it does', async () => {
    const h = await harness();
    const { approval, parent } = await h.startApproval();
    let left = 1;
    h.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.thread_ts && left-- > 0)
        throw new SlackApiError('service_unavailable');
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    expect(
      h.workspace.calls.some(
        (c) => c.method === 'chat.postMessage' && c.response.error === 'service_unavailable',
      ),
    ).toBe(true);
    await h.app.deliver(new Date(Date.now() + 15 * MINUTE));
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(await stateOf(h, `${approval.djbh}:decision:approved`)).toBe('sent');
  });

  it('takes the DM fallback when the thread is locked, so the requester learns the decision', async () => {
    const h = await harness();
    const { approval, parent } = await h.startApproval();
    h.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.thread_ts)
        throw new SlackApiError('restricted_action_thread_locked');
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    expect(replies(h, parent, 'Approved')).toHaveLength(0);
    const dm = h.workspace.appDm(h.user('sam.taylor@corp.example')).id;
    expect(
      h.workspace.messages.filter((m) => m.channel === dm && m.text.includes('Approved')),
    ).toHaveLength(1);
  });

  it('is done with an edit whose message was deleted, without an error line', async () => {
    const h = await harness();
    const { approval } = await h.startApproval();
    h.workspace.beforeCall = (method) => {
      if (method === 'chat.update') throw new SlackApiError('message_not_found');
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    expect(await stateOf(h, `${approval.djbh}:parent-update:approved`)).toBe('delivered');
    expect(h.logs.entries().filter((e) => Number(e.level) >= 50)).toEqual([]);
  });

  it('gives up on what never passes (invalid_blocks), at error', async () => {
    const h = await harness();
    const { approval } = await h.startApproval();
    h.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.thread_ts)
        throw new SlackApiError('invalid_blocks');
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    expect(await stateOf(h, `${approval.djbh}:decision:approved`)).toBe('failed');
    expect(h.logs.entries().some((e) => e.level === 50)).toBe(true);
  });

  it('tells the requester when the approver cannot be reached, and sends that approver no reminders', async () => {
    const clock = movableClock();
    const h = await harness({
      now: clock.now,
      env: { REMINDER_AFTER_HOURS: '1', REMINDER_INTERVAL_HOURS: '1' },
    });
    const maria = h.user('maria.lopez@corp.example');
    h.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.channel === maria)
        throw new SlackApiError('channel_not_found');
    };
    const { approval, parent } = await h.startApproval();
    await h.app.deliver();
    expect(replies(h, parent, 'cannot reach the approver')).toHaveLength(1);
    expect(h.workspace.messages.filter((m) => m.text.includes('cannot reach'))).toHaveLength(1);
    clock.advance(2 * 3_600_000);
    const pass = await h.app.poll();
    expect(pass.reminded).toBe(0);
    expect(replies(h, parent, 'Reminded')).toHaveLength(0);
    expect(await stateOf(h, `${approval.djbh}:approver-dm`)).toBe('delivered');
  });
});
