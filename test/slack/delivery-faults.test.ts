import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createApprovalServiceClient } from '../../src/approval-service/approval-service-client.ts';
import { announcementsCommand } from '../../src/operator/announcements-command.ts';
import { SlackApiError } from '../../src/sandbox/workspace.ts';
import { announcementStates } from '../../src/store/announcement-states.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { type Harness, harnessPerTest, waitFor } from '../helpers/harness.ts';
import { seedApproval } from '../helpers/outbox-seed.ts';

// The outbox against a Slack stand-in that misbehaves as Slack does on a bad day (HTTP 429 with
// Retry-After, 5xx after the post is committed, calls hanging past the client's timeout, outages),
// with the app's production Web API client settings. Each decision must reach its thread once.

const harness = harnessPerTest();
const MINUTE = 60_000;
// Short leases and timeouts, so that takeovers happen within a test; production keeps the ratio.
const FAST = { ANNOUNCEMENT_LEASE_SECONDS: '3', SLACK_TIMEOUT_MS: '1000' };

/** A clock the test can move forward; the database's clock (leases) keeps real time. */
function movableClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance(ms: number) {
      offset += ms;
    },
    at: (ms: number) => new Date(Date.now() + offset + ms),
  };
}

const replies = (h: Harness, parent: { channel: string; ts: string }, text: string) =>
  h.workspace.replies(parent.channel, parent.ts).filter((m) => m.text.includes(text));

async function withStore<T>(
  h: Harness,
  use: (store: ApprovalStores, db: DatabaseHandle) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(h.env.DATABASE_URL);
  try {
    return await use(createApprovalStores(db.db, db.dialect), db);
  } finally {
    await db.close();
  }
}

async function announcementState(h: Harness, id: string): Promise<string | undefined> {
  return withStore(h, async (store) => {
    const failed = (await store.failedAnnouncements(1000)).some((a) => a.id === id);
    if (failed) return 'failed';
    const pending = (await store.pendingAnnouncements(1000)).some((a) => a.id === id);
    return pending ? 'pending' : (await store.sentPost(id)) ? 'sent' : 'other';
  });
}

/** A process that holds SQLite's write lock on `path` for `ms`; says "locked" once it has it. */
function holdWriteLock(path: string, ms: number): ChildProcess {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked');
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); }, Number(process.argv[2]));`;
  return spawn(process.execPath, ['-e', script, path, String(ms)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

describe('delivery under production faults', () => {
  it('loses nothing through an hour of Slack outage, and posts the decision once it is back', async () => {
    const clock = movableClock();
    // The wait for late commits after unknown outcomes (the outage's 503s) has its own test below,
    // and the channel's pace its own tests; here both would only hold each of the 60 passes on the
    // database's real clock (a second each, which was most of this test's time).
    const h = await harness({
      now: clock.now,
      env: { SLACK_COMMIT_HORIZON_MS: '0', SLACK_CHANNEL_INTERVAL_MS: '0' },
    });
    const { approval, parent } = await h.startApproval();
    h.faults.outageStatus = 503;
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    for (let minute = 0; minute < 60; minute++) {
      clock.advance(MINUTE);
      await h.app.deliver();
    }
    expect(replies(h, parent, 'Approved')).toHaveLength(0);
    expect(await announcementState(h, `${approval.djbh}:decision:approved`)).toBe('pending');
    h.faults.outageStatus = undefined;
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(await announcementState(h, `${approval.djbh}:decision:approved`)).toBe('sent');
  });

  it('posts once when Slack took the post but answered 5xx', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now });
    const { approval, parent } = await h.startApproval();
    h.faults.failAfterCommit('chat.postMessage', 503);
    h.sim.decide(approval.djbh, 'refuse');
    await h.app.poll();
    expect(replies(h, parent, 'Rejected')).toHaveLength(1);
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    await h.app.poll();
    expect(replies(h, parent, 'Rejected')).toHaveLength(1);
    // The retry looked in the thread, found the post by its metadata and recorded it.
    expect(h.workspace.callsOf('conversations.replies').length).toBeGreaterThan(0);
    expect(await announcementState(h, `${approval.djbh}:decision:rejected`)).toBe('sent');
  });

  it('finds an earlier post beyond the first page of the channel before posting again', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now });
    const general = h.channel('general');
    const sam = h.user('sam.taylor@corp.example');
    // The request is posted, the answer lost; then the channel gets busy.
    h.faults.failAfterCommit('chat.postMessage', 502);
    const view = await h.openModal('sam.taylor@corp.example');
    await h.slack.submitView(view.id, { note_input: 'n' });
    const approval = await waitFor(() => h.sim.approvals()[0], 5000, 'the approval');
    await waitFor(() => h.workspace.history(general).length === 1, 5000, 'the committed post');
    for (let i = 0; i < 450; i++) h.workspace.postAsUser(sam, general, `chatter ${i}`);
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    const requests = h.workspace
      .history(general)
      .filter((m) => m.metadata?.event_payload.announcement_id === `${approval.djbh}:request`);
    expect(requests).toHaveLength(1);
    expect(await announcementState(h, `${approval.djbh}:request`)).toBe('sent');
    expect(
      h.workspace.callsOf('conversations.history').some((c) => c.args.cursor !== undefined),
    ).toBe(true);
  });

  it('posts once when a post hangs past the client timeout after Slack committed it', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now, env: FAST });
    const { approval, parent } = await h.startApproval();
    h.faults.hang('chat.postMessage', 2500);
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(await announcementState(h, `${approval.djbh}:decision:approved`)).toBe('sent');
  });

  it('posts once when the database fails right after the post, once the lease runs out', async () => {
    const h = await harness({ env: FAST });
    const { approval, parent } = await h.startApproval();
    // Another process takes the write lock as the post goes out and holds it for 6 s: recording
    // the post fails (SQLITE_BUSY after the 5 s busy timeout), and the lease (3 s) runs out.
    let locker: ChildProcess | undefined;
    h.workspace.beforeCall = async (method, args) => {
      if (method !== 'chat.postMessage' || !args.thread_ts || locker) return;
      locker = holdWriteLock(h.env.DATABASE_URL, 6000);
      await new Promise((resolve) => locker?.stdout?.once('data', resolve));
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    await waitFor(() => locker?.exitCode === 0, 15_000, 'the lock to be released');
    await waitFor(
      async () => (await announcementState(h, `${approval.djbh}:decision:approved`)) === 'sent',
      15_000,
      'the recovery',
    );
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    // Recording failed, the retry found the post by its metadata and recorded it instead.
    const log = h.logs.lines.join('\n');
    expect(log).toContain('database is locked');
    expect(log).toContain('announcement was already posted; recorded it');
  }, 120_000);

  it('posts once with two replicas when a post outlasts the lease', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now, env: FAST });
    const replica = await h.startReplica({ now: clock.now });
    const { approval, parent } = await h.startApproval();
    // Committed at once, answered after 4 s: longer than the client waits and than the lease.
    h.faults.hang('chat.postMessage', 4000);
    h.sim.decide(approval.djbh, 'agree');
    await Promise.all([h.app.poll(), replica.poll()]);
    await new Promise((r) => setTimeout(r, 3500));
    clock.advance(15 * MINUTE);
    await Promise.all([h.app.deliver(), replica.deliver(), h.app.deliver()]);
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(await announcementState(h, `${approval.djbh}:decision:approved`)).toBe('sent');
  });

  it('posts once with two replicas whose clocks are 2 minutes apart', async () => {
    const h = await harness();
    const ahead = await h.startReplica({ now: () => new Date(Date.now() + 2 * MINUTE) });
    const { approval, parent } = await h.startApproval();
    // A slow answer keeps the first attempt's lease held while the other replica looks.
    h.faults.hang('chat.postMessage', 1500, { count: 4 });
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    await Promise.all([h.app.deliver(), ahead.deliver(), ahead.deliver()]);
    await new Promise((r) => setTimeout(r, 2000));
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
  });

  it('does not let 20 approvals whose requests failed for good hold up a new one', async () => {
    // Posts to the requester's DM are spaced too; a shorter spacing keeps the test short.
    const h = await harness({ env: { SLACK_CHANNEL_INTERVAL_MS: '100' } });
    const sam = h.user('sam.taylor@corp.example');
    const now = new Date();
    await withStore(h, async (store) => {
      for (let i = 0; i < 20; i++) {
        const djbh = `F${String(i).padStart(10, '0')}x`;
        await seedApproval(
          store,
          {
            djbh,
            teamId: h.workspace.teamId,
            slack: { channelId: h.channel('general') },
            parties: {
              requester: { slackId: sam, login: 'sam.taylor@corp.example' },
              approver: {
                login: 'maria.lopez@corp.example',
                slackId: h.user('maria.lopez@corp.example'),
              },
            },
            request: { title: `Failed ${i}`, note: 'n', locale: 'en-US', createdAt: now },
          },
          { failed: 'invalid_blocks' },
        );
        await store.recordDecision(djbh, {
          decision: 'approved',
          decidedBy: null,
          ended: true,
          now,
          nextCheckAt: now,
        });
      }
    });
    const { approval } = await h.startApproval('sam.taylor@corp.example', 'general', 'New one');
    expect(approval.djbh).toBeTruthy();
    // The decisions of the failed requests reach the requester's DM instead of waiting for ever.
    await h.app.deliver();
    const dm = h.workspace.appDm(sam).id;
    const decided = h.workspace.messages.filter(
      (m) => m.channel === dm && m.text.includes('Approved'),
    );
    expect(decided).toHaveLength(20);
  }, 120_000);

  it('spaces posts to one busy channel so 429s are rare, and posts in another channel meanwhile', async () => {
    const h = await harness();
    h.faults.channelPostsPerSecond = 1;
    const started = [];
    for (let i = 0; i < 5; i++)
      started.push(await h.startApproval('sam.taylor@corp.example', 'general', `Busy ${i}`));
    await h.app.deliver();
    const before = h.faults.rateLimited.length;
    const other = h.workspace.addChannel(
      'other',
      'public',
      new Set([...h.workspace.channelByName('general').members]),
    );
    const lone = await h.startApproval('sam.taylor@corp.example', 'other', 'Elsewhere');
    for (const { approval } of started) h.sim.decide(approval.djbh, 'agree');
    h.sim.decide(lone.approval.djbh, 'agree');
    await h.app.poll();
    for (const { parent } of started) expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(other.id).toBe(lone.parent.channel);
    // The other channel is not queued behind the busy one: its reply came before the busy
    // channel's second (which had to wait for Slack's per-channel spacing).
    const busyTimes = started.map(({ parent }) => Number(replies(h, parent, 'Approved')[0]?.ts));
    const [, second] = busyTimes.sort((a, b) => a - b);
    expect(Number(replies(h, lone.parent, 'Approved')[0]?.ts)).toBeLessThan(second ?? 0);
    // Paced at Slack's rate: at most the odd 429, each honoured.
    expect(h.faults.rateLimited.length - before).toBeLessThanOrEqual(1);
  }, 60_000);

  it('delivers 60 decisions in one rate-limited channel once each, with another channel not waiting', async () => {
    // Slack's limit is about one post per second per channel; scaled to ten here (and the app's
    // spacing to 100 ms) so that 60 posts take seconds. npm run bench runs it at Slack's own pace.
    const h = await harness({ env: { SLACK_CHANNEL_INTERVAL_MS: '100' } });
    h.faults.channelPostsPerSecond = 10;
    const general = h.channel('general');
    const other = h.workspace.addChannel(
      'other',
      'public',
      new Set([...h.workspace.channelByName('general').members]),
    ).id;
    const sam = h.user('sam.taylor@corp.example');
    const service = createApprovalServiceClient({
      baseUrl: h.sim.url,
      appName: h.env.APPROVAL_APP_NAME,
      appKey: h.env.APPROVAL_APP_KEY,
    });
    const parents: Array<{ channel: string; ts: string; djbh: string }> = [];
    await withStore(h, async (store) => {
      for (let i = 0; i <= 60; i++) {
        const channel = i < 60 ? general : other;
        const { djbh } = await service.startApproval({
          requester: 'sam.taylor@corp.example',
          approver: 'maria.lopez@corp.example',
          title: `Busy ${i}`,
          note: 'n',
        });
        // The request message is already in its channel.
        const posted = await h.workspace.call('chat.postMessage', { channel, text: djbh });
        await seedApproval(
          store,
          {
            djbh,
            teamId: h.workspace.teamId,
            slack: { channelId: channel },
            parties: {
              requester: { slackId: sam, login: 'sam.taylor@corp.example' },
              approver: { login: 'maria.lopez@corp.example', slackId: null },
            },
            request: { title: `Busy ${i}`, note: 'n', locale: 'en-US', createdAt: new Date() },
          },
          { posted: { channel, ts: String(posted.ts) } },
        );
        parents.push({ channel, ts: String(posted.ts), djbh });
      }
    });
    await h.app.deliver();
    const before = h.faults.rateLimited.length;
    for (const { djbh } of parents) h.sim.decide(djbh, 'agree');
    await h.app.poll();
    const replyTs = parents.map((p) => {
      const found = replies(h, p, 'Approved');
      expect(found, p.djbh).toHaveLength(1);
      return Number(found[0]?.ts);
    });
    const busy = replyTs.slice(0, 60).sort((a, b) => a - b);
    // The other channel's decision (recorded last in the pass) did not queue behind the busy
    // channel's 60: it was out before the busy channel's tenth, a second into its six.
    expect(replyTs[60]).toBeLessThan(busy[9] ?? 0);
    // Paced under the limit: at most the odd 429, each honoured and retried.
    expect(h.faults.rateLimited.length - before).toBeLessThanOrEqual(3);
  }, 60_000);

  it('honours a Retry-After of 30 days only up to its cap, fails the post at the end of the retry window, counts it and frees the channel', async () => {
    const clock = movableClock();
    const h = await harness({
      now: clock.now,
      env: {
        ANNOUNCEMENT_RETRY_HOURS: '1',
        // Scaled down so the lane's pace, on the database's real clock, is waited out in a second.
        SLACK_RETRY_AFTER_MAX_SECONDS: '1',
        ADMIN_PORT: '0',
      },
    });
    const { approval, parent } = await h.startApproval();
    // Slack (or a proxy in front of it) answers every post with a month's Retry-After.
    h.faults.rateLimit('chat.postMessage', 2_592_000, 1000);
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    const id = `${approval.djbh}:decision:approved`;
    expect(await announcementState(h, id)).toBe('pending');
    // Tried again within the cap, again and again, until the hour's window ends: then failed.
    for (let i = 0; i < 8 && (await announcementState(h, id)) === 'pending'; i++) {
      clock.advance(10 * MINUTE);
      await h.app.deliver();
    }
    expect(await announcementState(h, id)).toBe('failed');
    expect(h.faults.rateLimited.length).toBeGreaterThan(2);
    const failure = h.logs.entries().find((e) => e.announcement === id && e.level === 50);
    expect(failure?.reason).toContain('still failing after 1 h');
    const metrics = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    expect(metrics).toContain('slack_approvals_announcements_failed_total{kind="decision"} 1');
    // The channel is not held: once Slack takes posts again, the next request goes out at once.
    h.faults.clearRules();
    const next = await h.startApproval('sam.taylor@corp.example', 'general', 'After the storm');
    expect(next.parent.channel).toBe(parent.channel);
  });

  it('fails nothing for a 30-hour token outage: after it, a 429 burst is waited out and every decision posted once', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now });
    const started = [];
    for (let i = 0; i < 3; i++)
      started.push(await h.startApproval('sam.taylor@corp.example', 'general', `Outage ${i}`));
    // Slack refuses the app's token: delivery pauses fleet-wide.
    h.workspace.beforeCall = () => {
      throw new SlackApiError('token_revoked');
    };
    for (const { approval } of started) h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    expect(await withStore(h, (store) => store.deliveryPause())).toBeDefined();
    // Thirty hours pass, on the app's clock and on the database's (the pause is moved back).
    clock.advance(30 * 60 * MINUTE);
    await withStore(h, (_store, db) =>
      db.db
        .updateTable('delivery_state')
        .set((eb) => ({ paused_at_db: eb('paused_at_db', '-', 30 * 60 * MINUTE) }))
        .execute(),
    );
    // The token works again, and the catch-up meets a burst of 429s.
    h.workspace.beforeCall = undefined;
    h.faults.rateLimit('chat.postMessage', 1, 4);
    for (let i = 0; i < 10 && (await withStore(h, (s) => s.pendingAnnouncements(1))).length; i++) {
      await h.app.deliver();
      clock.advance(MINUTE);
    }
    expect(await withStore(h, (store) => store.failedAnnouncements(10))).toEqual([]);
    expect(h.faults.rateLimited.length).toBe(4);
    for (const { approval, parent } of started) {
      expect(replies(h, parent, 'Approved')).toHaveLength(1);
      expect(await announcementState(h, `${approval.djbh}:decision:approved`)).toBe('sent');
    }
  });

  it('posts once when Slack commits a post 15 s or 40 s after the client gave up, and posts again after the horizon when it never does', async () => {
    // Scaled 1:40 from production (10 s client timeout, 60 s horizon): the client gives up after
    // 1 s here and Slack may commit up to 1.5 s later; the late posts commit 375 ms and 1 s after.
    const clock = movableClock();
    const HORIZON_MS = 1500;
    const h = await harness({
      now: clock.now,
      env: { ...FAST, SLACK_COMMIT_HORIZON_MS: String(HORIZON_MS) },
    });
    const channels = ['general', 'second', 'third'];
    for (const name of channels.slice(1))
      h.workspace.addChannel(
        name,
        'public',
        new Set([...h.workspace.channelByName('general').members]),
      );
    const started: Array<Awaited<ReturnType<Harness['startApproval']>>> = [];
    for (const name of channels)
      started.push(await h.startApproval('sam.taylor@corp.example', name));
    h.faults.hang('chat.postMessage', 1000 + 375, { commit: false });
    h.faults.hang('chat.postMessage', 1000 + 1000, { commit: false });
    h.faults.lose('chat.postMessage', 1200);
    for (const { approval } of started) h.sim.decide(approval.djbh, 'agree');
    // When the post Slack never took is carried out again.
    let repostedAt: number | undefined;
    h.workspace.beforeCall = (method, args) => {
      const lost = h.faults.lost[0];
      if (method === 'chat.postMessage' && lost && args.channel === lost.channel)
        repostedAt ??= performance.now();
    };
    await h.app.poll();
    // Retries come as soon as they are due (the app's backoff is moved through at once), as they
    // would with production's 1–2 s backoff against commits 15 and 40 s late.
    const ids = started.map(({ approval }) => `${approval.djbh}:decision:approved`);
    const passes: Array<{ start: number; end: number }> = [];
    await waitFor(
      async () => {
        clock.advance(5000);
        const start = performance.now();
        await h.app.deliver();
        passes.push({ start, end: performance.now() });
        return started.every(({ parent }) => replies(h, parent, 'Approved').length > 0);
      },
      15_000,
      'every decision out',
    );
    for (const id of ids) expect(await announcementState(h, id)).toBe('sent');
    // Long after the latest commit: still one message each.
    await new Promise((r) => setTimeout(r, 1200));
    for (const { parent } of started) expect(replies(h, parent, 'Approved')).toHaveLength(1);
    // The post Slack never took went out again only after the horizon: the cost of the wait.
    const gaveUp = (h.faults.lost[0]?.at ?? Number.NaN) + 1000;
    const delay = (repostedAt ?? Number.NaN) - gaveUp;
    expect(delay).toBeGreaterThanOrEqual(HORIZON_MS);
    // And no later than the first pass that began once the horizon had passed (not a time after
    // the horizon: a pass takes what the machine gives it).
    const firstAfter = passes.find((p) => p.start >= gaveUp + HORIZON_MS);
    expect(repostedAt).toBeLessThanOrEqual(firstAfter?.end ?? Number.POSITIVE_INFINITY);
  }, 120_000);

  it('names the requester in the decision reply and shows the decision in the approver’s DM', async () => {
    const h = await harness();
    const { approval, parent } = await h.startApproval();
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    const [reply] = replies(h, parent, 'Approved');
    expect(reply?.text).toContain(`<@${h.user('sam.taylor@corp.example')}>`);
    expect(reply?.text).toContain(`<@${h.user('maria.lopez@corp.example')}>`);
    const dm = h.workspace.appDm(h.user('maria.lopez@corp.example')).id;
    const [approverDm] = h.workspace.messages.filter((m) => m.channel === dm);
    expect(JSON.stringify(approverDm?.blocks)).toContain('Approved · 同意');
    expect(h.workspace.messages.filter((m) => m.channel === dm)).toHaveLength(1);
  });

  it('drops a reminder held up by Slack once the approval is decided', async () => {
    const clock = movableClock();
    const h = await harness({
      now: clock.now,
      env: { REMINDER_AFTER_HOURS: '1', REMINDER_INTERVAL_HOURS: '1' },
    });
    const { approval, parent } = await h.startApproval();
    const maria = h.user('maria.lopez@corp.example');
    const dm = h.workspace.appDm(maria).id;
    h.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && [dm, maria].includes(String(args.channel)))
        throw new SlackApiError('service_unavailable');
      if (method === 'chat.postMessage' && args.thread_ts)
        throw new SlackApiError('service_unavailable');
    };
    clock.advance(2 * 3_600_000);
    const first = await h.app.poll();
    expect(first.reminded).toBe(1);
    h.workspace.beforeCall = undefined;
    h.sim.decide(approval.djbh, 'agree');
    clock.advance(20 * MINUTE);
    await h.app.poll();
    clock.advance(15 * MINUTE);
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
    expect(replies(h, parent, 'Reminded')).toHaveLength(0);
    expect(
      h.workspace.messages.filter((m) => m.channel === dm && m.text.includes('Reminder')),
    ).toEqual([]);
  });

  it('finishes an approval the service no longer knows with its own message in the thread', async () => {
    const clock = movableClock();
    const h = await harness({ now: clock.now });
    const { approval, parent } = await h.startApproval();
    h.sim.forget(approval.djbh);
    await h.app.poll();
    clock.advance(25 * 3_600_000);
    await h.app.poll();
    expect(replies(h, parent, 'no longer')).toHaveLength(0);
    expect(replies(h, parent, 'has not known')).toHaveLength(1);
  });

  it('ends an announcement Slack refuses for good as failed, at error, and posts it once re-driven', async () => {
    const h = await harness();
    const { approval, parent } = await h.startApproval();
    h.workspace.beforeCall = (method, args) => {
      if (method === 'chat.postMessage' && args.thread_ts)
        throw new SlackApiError('invalid_blocks');
    };
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    const id = `${approval.djbh}:decision:approved`;
    expect(await announcementState(h, id)).toBe('failed');
    const failure = h.logs.entries().find((e) => e.announcement === id && e.level === 50);
    expect(failure).toMatchObject({ reason: 'Slack: invalid_blocks' });
    h.workspace.beforeCall = undefined;
    const lines: string[] = [];
    await withStore(h, (store, db) =>
      announcementsCommand(['redrive', id], {
        store,
        states: (ids) => announcementStates(db.db, ids),
        now: () => new Date(),
        out: (l) => lines.push(l),
      }),
    );
    expect(lines).toEqual(['1 announcement pending again']);
    await h.app.deliver();
    expect(replies(h, parent, 'Approved')).toHaveLength(1);
  });

  it('opens the form at once while Slack throttles the background posts', async () => {
    const h = await harness();
    h.faults.rateLimit('chat.postMessage', 10, 5);
    const first = await h.openModal('sam.taylor@corp.example');
    await h.slack.submitView(first.id, { note_input: 'n' });
    await waitFor(() => h.faults.rateLimited.length > 0, 5000, 'a 429 on the request post');
    // The background waits out Retry-After; a person's /approve must not wait with it (the
    // stand-in refuses a trigger older than 3 s, as Slack does).
    const second = await h.openModal('li.wei@corp.example');
    expect(JSON.stringify(second.view)).toContain('initial_user');
    expect(h.workspace.callsOf('views.open').every((c) => c.response.ok)).toBe(true);
  });
});
