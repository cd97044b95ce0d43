import type { Logger } from '@slack/logger';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AnnouncementDispatcher,
  createAnnouncementDispatcher,
} from '../../src/approvals/announcement-dispatcher.ts';
import { ruleOf } from '../../src/approvals/announcement-rules.ts';
import type { ApprovalStore } from '../../src/approvals/approval-store.ts';
import type { AnnouncementKind } from '../../src/approvals/tracked-approval.ts';
import { announcementId } from '../../src/approvals/tracked-approval.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createIdentities } from '../../src/slack/identities.ts';
import { createSlackAnnouncer } from '../../src/slack/slack-announcer.ts';
import { createSlackPeople } from '../../src/slack/slack-people.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { createApprovalStore } from '../../src/store/approval-store.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

// A model-based test of the outbox: generated schedules of recorded facts, delivery passes by one
// to three replicas with skewed clocks, crashes, lease expiry, re-drives, token revocation and,
// per Slack call, an outcome (success, the answer lost after Slack carried the call out, 5xx, 429
// with Retry-After, a timeout before or after the call, a hang while another replica takes over,
// a crash before or after, or one of Slack's errors of each class). The real store (SQLite, and
// Postgres when TEST_POSTGRES_URL is set), the real dispatcher and the real Slack announcer with
// its real WebClient run against a model of Slack that remembers what was really posted.
//
// Why Slack is modelled at the fetch level (the WebClient's `fetch` option) rather than at the
// announcer port: the findings this test must catch live in the announcer (how errors are
// classified, where and from when it searches) as much as in the dispatcher, so the announcer has
// to run for real; calling the model in-process instead of over a socket keeps a case to a few
// milliseconds. Time is one controllable clock: replicas read it with their skew, attempt
// deadlines read it as their monotonic clock, and "a lease runs out" moves the database's leases
// into the past (leases are measured on the database's clock, which a test cannot move).
//
// Invariants: no announcement is ever visible twice; once faults stop, every announcement becomes
// visible exactly once (or is skipped as no longer worth it) within a bounded number of passes;
// replies in a thread appear in the order they were recorded; nothing is marked failed unless
// Slack refused it for good. A failure prints fast-check's seed and the shrunk schedule.

const T0 = Date.parse('2026-11-23T08:00:00Z');
const MINUTE = 60_000;
const LEASE_MS = 60_000;
const CALL_TIMEOUT_MS = 10_000;
/** Codes the model answers that no retry can fix; the only reason a failure is allowed. */
const GIVE_UP = ['invalid_blocks', 'invalid_ts_oldest'] as const;
/** Codes after which the message must reach the requester some other way. */
const FALLBACK = ['restricted_action_thread_locked', 'not_in_channel', 'is_archived'] as const;
const RETRY = ['service_unavailable', 'ratelimited', 'internal_error'] as const;
/** Answered to a post to the approver: they were deactivated or are gone. */
const UNREACHABLE = 'user_not_found';
const PAUSE = ['invalid_auth', 'token_revoked', 'account_inactive', 'not_authed'] as const;

type Outcome =
  | { kind: 'ok' }
  /** Slack carries the call out; the answer is lost (HTTP 503). */
  | { kind: 'lost' }
  /** HTTP 503 without doing anything. */
  | { kind: 'unavailable' }
  | { kind: 'rate-limited'; retryAfterS: number }
  /** The client gives up waiting (the clock moves by the call timeout); done first when `done`. */
  | { kind: 'timeout'; done: boolean }
  /** Slack carries the call out, then answers only after the lease ran out and others ran. */
  | { kind: 'hang' }
  /** The replica dies during the call; Slack carried it out when `done`. */
  | { kind: 'crash'; done: boolean }
  /** One of Slack's error codes; `done` for codes after which the call may have happened. */
  | { kind: 'error'; code: string; done: boolean };

type CallGroup = 'posts' | 'edits' | 'searches' | 'others';

const groupOf = (method: string): CallGroup =>
  method === 'chat.postMessage'
    ? 'posts'
    : method === 'chat.update'
      ? 'edits'
      : method === 'conversations.history' || method === 'conversations.replies'
        ? 'searches'
        : 'others';

type Op =
  | { op: 'decide'; approval: number; decision: 'agree' | 'refuse' }
  | { op: 'remind'; approval: number }
  /** Escalated to the approver's leader: a DM in that person's lane, and a note in the thread. */
  | { op: 'escalate'; approval: number }
  | { op: 'end'; approval: number }
  | { op: 'pass'; replica: number }
  | { op: 'advance'; ms: number }
  | { op: 'expire-leases' }
  | { op: 'crash-at-store'; replica: number; after: boolean }
  | { op: 'restart'; replica: number }
  | { op: 'redrive' }
  | { op: 'revoke' }
  | { op: 'restore' };

interface Schedule {
  approvals: number;
  /** One channel for all, or one each (lanes shared or not). */
  sameChannel: boolean;
  skewsMs: number[];
  ops: Op[];
  /**
   * Outcomes of the Slack calls in the order they are made, one stream per kind of call (posts,
   * edits, searches, the rest), so that a fault meets the call it was meant for as often as
   * not; `ok` once a stream is used up.
   */
  outcomes: Record<CallGroup, Outcome[]>;
}

const outcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'ok' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'lost' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unavailable' as const }) },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 1, max: 30 }).map((s) => ({
      kind: 'rate-limited' as const,
      retryAfterS: s,
    })),
  },
  { weight: 1, arbitrary: fc.boolean().map((done) => ({ kind: 'timeout' as const, done })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
  { weight: 1, arbitrary: fc.boolean().map((done) => ({ kind: 'crash' as const, done })) },
  {
    weight: 4,
    // Each class of error as likely as the others, whatever the number of its codes.
    arbitrary: fc
      .oneof(
        fc.constantFrom(...GIVE_UP),
        fc.constantFrom(...FALLBACK),
        fc.constantFrom(...RETRY),
        fc.constantFrom(...PAUSE),
        fc.constant('message_not_found'),
        fc.constant(UNREACHABLE),
      )
      .chain((code) =>
        fc.boolean().map((done) => ({
          kind: 'error' as const,
          code,
          done: done && code === 'internal_error',
        })),
      ),
  },
);

/** A search fails for good more often: an announcement then fails while it may be posted. */
const searchOutcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 4, arbitrary: outcomeArb },
  {
    weight: 1,
    arbitrary: fc.constant({ kind: 'error' as const, code: 'invalid_ts_oldest', done: false }),
  },
);

const opArb = (approvals: number, replicas: number): fc.Arbitrary<Op> => {
  const approval = fc.integer({ min: 0, max: approvals - 1 });
  const replica = fc.integer({ min: 0, max: replicas - 1 });
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .record({ approval, decision: fc.constantFrom('agree' as const, 'refuse' as const) })
        .map((o) => ({ op: 'decide' as const, ...o })),
    },
    { weight: 2, arbitrary: approval.map((a) => ({ op: 'remind' as const, approval: a })) },
    { weight: 1, arbitrary: approval.map((a) => ({ op: 'escalate' as const, approval: a })) },
    { weight: 1, arbitrary: approval.map((a) => ({ op: 'end' as const, approval: a })) },
    { weight: 10, arbitrary: replica.map((r) => ({ op: 'pass' as const, replica: r })) },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom(1000, 30_000, 15 * MINUTE, 3 * 3_600_000)
        .map((ms) => ({ op: 'advance' as const, ms })),
    },
    { weight: 1, arbitrary: fc.constant({ op: 'expire-leases' as const }) },
    {
      weight: 1,
      arbitrary: fc
        .record({ replica, after: fc.boolean() })
        .map((o) => ({ op: 'crash-at-store' as const, ...o })),
    },
    { weight: 1, arbitrary: replica.map((r) => ({ op: 'restart' as const, replica: r })) },
    { weight: 1, arbitrary: fc.constant({ op: 'redrive' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'revoke' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'restore' as const }) },
  );
};

const scheduleArb: fc.Arbitrary<Schedule> = fc
  .record({ approvals: fc.integer({ min: 1, max: 3 }), replicas: fc.integer({ min: 1, max: 3 }) })
  .chain(({ approvals, replicas }) =>
    fc.record({
      approvals: fc.constant(approvals),
      sameChannel: fc.boolean(),
      skewsMs: fc.array(fc.integer({ min: -2 * MINUTE, max: 2 * MINUTE }), {
        minLength: replicas,
        maxLength: replicas,
      }),
      ops: fc.array(opArb(approvals, replicas), { maxLength: 30 }),
      outcomes: fc.record({
        posts: fc.array(outcomeArb, { maxLength: 20 }),
        edits: fc.array(outcomeArb, { maxLength: 10 }),
        searches: fc.array(searchOutcomeArb, { maxLength: 10 }),
        others: fc.array(outcomeArb, { maxLength: 10 }),
      }),
    }),
  );

const never = () => new Promise<never>(() => {});
const silent: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => 'error' as never,
  setName() {},
};
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

interface Replica {
  alive: boolean;
  dead: Promise<void>;
  kill(): void;
  dispatcher: AnnouncementDispatcher;
  /** Crash at the next write to the store, before or after it is made. */
  crashAtStore: { after: boolean } | undefined;
}

/** One case: the Slack model, the clock, the replicas, run against one database. */
class World {
  t = T0;
  revoked = false;
  readonly workspace = new Workspace({
    people: [
      { login: 'sam@corp.example', name: 'Sam' },
      { login: 'maria@corp.example', name: 'Maria' },
      { login: 'chen@corp.example', name: 'Chen' },
    ],
    channels: [
      { name: 'general', appIsMember: true },
      { name: 'other', appIsMember: true },
      { name: 'third', appIsMember: true },
    ],
    now: () => this.t,
  });
  readonly replicas: Replica[] = [];
  private outcomes: Record<CallGroup, Outcome[]>;
  private interleaving = false;
  /** Announcements that failed at some point (re-drives change their recorded order). */
  readonly everFailed = new Set<string>();
  readonly trace: string[] = [];

  constructor(
    readonly store: ApprovalStore,
    readonly db: DatabaseHandle,
    readonly schedule: Schedule,
  ) {
    this.outcomes = {
      posts: [...schedule.outcomes.posts],
      edits: [...schedule.outcomes.edits],
      searches: [...schedule.outcomes.searches],
      others: [...schedule.outcomes.others],
    };
    for (const skew of schedule.skewsMs) this.replicas.push(this.startReplica(skew));
  }

  get approverId(): string {
    return this.workspace.userByLogin('maria@corp.example').id;
  }

  stopFaults(): void {
    this.outcomes = { posts: [], edits: [], searches: [], others: [] };
    this.revoked = false;
    for (const r of this.replicas) r.crashAtStore = undefined;
  }

  startReplica(skew: number): Replica {
    let kill = () => {};
    const replica: Replica = {
      alive: true,
      dead: new Promise<void>((resolve) => {
        kill = resolve;
      }),
      kill: () => {
        replica.alive = false;
        kill();
      },
      crashAtStore: undefined,
      dispatcher: undefined as unknown as AnnouncementDispatcher,
    };
    const store = this.guardedStore(replica);
    const client = new WebClient('xoxb-model', {
      slackApiUrl: 'https://slack.model/api/',
      // The model answers with Node's own Response, which the client's narrower type describes.
      fetch: this.slackFetch(replica) as unknown as WebClientOptions['fetch'],
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logger: silent,
    });
    const people = createSlackPeople(client, () => this.t);
    const links = createAccountLinkStore(this.db.db);
    const announcer = createSlackAnnouncer({
      client,
      people,
      identities: createIdentities({ people, links }),
      channelLanguage: 'en',
      giveUpAfterDays: 30,
      sentDm: (djbh) => store.sentPost(announcementId(djbh, 'approver-dm')),
      sentPost: (id) => store.sentPost(id),
    });
    replica.dispatcher = createAnnouncementDispatcher(
      {
        store,
        announcer,
        logger: quiet,
        now: () => new Date(this.t + skew),
        monotonic: () => this.t,
        random: () => 0.5,
      },
      {
        leaseMs: LEASE_MS,
        callTimeoutMs: CALL_TIMEOUT_MS,
        retryForMs: 365 * 86_400_000,
        laneIntervalMs: 0,
        concurrency: 4,
        idleMs: 1000,
        pauseCheckMs: 0,
      },
    );
    return replica;
  }

  /** The real store; a dead replica's calls never return (it has no process any more). */
  guardedStore(replica: Replica): ApprovalStore {
    const store = this.store;
    const writes = new Set([
      'claimAnnouncement',
      'markAnnouncementSent',
      'markAnnouncementRetry',
      'markAnnouncementFinal',
      'pauseDelivery',
      'resumeDelivery',
    ]);
    return new Proxy(store, {
      get(target, key: keyof ApprovalStore) {
        const original = target[key] as (...args: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          if (!replica.alive) return never();
          const crash = writes.has(key) ? replica.crashAtStore : undefined;
          if (crash) replica.crashAtStore = undefined;
          if (crash && !crash.after) {
            replica.kill();
            return never();
          }
          const result = await original.apply(target, args);
          if (crash) replica.kill();
          if (!replica.alive) return never();
          return result;
        };
      },
    });
  }

  /** Slack's Web API as the model answers it, with this call's outcome from the schedule. */
  slackFetch(replica: Replica): typeof fetch {
    return async (input, init) => {
      if (!replica.alive) return never();
      const method = String(input).split('/').pop() ?? '';
      const args: Record<string, unknown> = Object.fromEntries(
        new URLSearchParams(String(init?.body ?? '')),
      );
      delete args.token;
      if (this.revoked) return answer(200, { ok: false, error: 'token_revoked' });
      const outcome = this.applicable(
        this.outcomes[groupOf(method)].shift() ?? { kind: 'ok' },
        method,
        args,
      );
      this.trace.push(`${method} ${outcome.kind}${'code' in outcome ? `:${outcome.code}` : ''}`);
      const carryOut = () => this.workspace.call(method, args);
      switch (outcome.kind) {
        case 'ok':
          return answer(200, await carryOut());
        case 'lost':
          await carryOut();
          return answer(503, '<html>Service Unavailable</html>');
        case 'unavailable':
          return answer(503, '<html>Service Unavailable</html>');
        case 'rate-limited':
          return answer(
            429,
            { ok: false, error: 'ratelimited' },
            { 'retry-after': String(outcome.retryAfterS) },
          );
        case 'timeout':
          if (outcome.done) await carryOut();
          this.t += CALL_TIMEOUT_MS;
          throw new Error('The operation was aborted due to timeout');
        case 'hang': {
          const body = await carryOut();
          await this.interleave(replica);
          return answer(200, body);
        }
        case 'crash':
          if (outcome.done) await carryOut();
          replica.kill();
          return never();
        case 'error':
          if (outcome.done) await carryOut();
          return answer(200, { ok: false, error: outcome.code });
      }
    };
  }

  /** Codes only where Slack answers them; elsewhere the call just succeeds. */
  private applicable(outcome: Outcome, method: string, args: Record<string, unknown>): Outcome {
    if (outcome.kind === 'hang' && this.interleaving) return { kind: 'ok' };
    if (outcome.kind !== 'error') return outcome;
    const channel = String(args.channel ?? '');
    const toChannel = method === 'chat.postMessage' && channel.startsWith('C');
    const where: Record<string, boolean> = {
      message_not_found: method === 'chat.update',
      invalid_blocks: method === 'chat.postMessage' || method === 'chat.update',
      invalid_ts_oldest: method === 'conversations.history' || method === 'conversations.replies',
      [UNREACHABLE]: method === 'users.info' && args.user === this.approverId,
    };
    const fits = (FALLBACK as readonly string[]).includes(outcome.code)
      ? toChannel
      : (where[outcome.code] ?? true);
    return fits ? outcome : { kind: 'ok' };
  }

  /** While a call hangs: its lease runs out and the other replicas run a pass. */
  async interleave(stalled: Replica): Promise<void> {
    this.interleaving = true;
    try {
      await this.advance(LEASE_MS);
      await this.expireLeases();
      for (const r of this.replicas) if (r !== stalled && r.alive) await this.pass(r);
    } finally {
      this.interleaving = false;
    }
  }

  async pass(replica: Replica): Promise<void> {
    await Promise.race([
      (async () => {
        await replica.dispatcher.checkPause();
        await replica.dispatcher.pass();
      })(),
      replica.dead,
    ]);
  }

  async expireLeases(): Promise<void> {
    await this.db.db
      .updateTable('announcements')
      .set({ lease_until: 0 })
      .where('lease_until', 'is not', null)
      .execute();
    await this.db.db
      .updateTable('lane_leases')
      .set({ lease_until: 0 })
      .where('lease_until', 'is not', null)
      .execute();
  }

  /** The database's clock moves on too: lanes paced by Retry-After may post again. */
  async advance(ms: number): Promise<void> {
    this.t += ms;
    if (ms >= 30_000)
      await this.db.db.updateTable('lane_leases').set({ next_post_at: 0 }).execute();
  }

  async noteFailed(): Promise<void> {
    for (const a of await this.store.failedAnnouncements(1000)) this.everFailed.add(a.id);
  }
}

function answer(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/** Runs one schedule and checks the invariants; throws (with the trace) when one breaks. */
async function runCase(handle: DatabaseHandle, schedule: Schedule): Promise<void> {
  await clear(handle);
  const store = createApprovalStore(handle.db, handle.dialect);
  const world = new World(store, handle, schedule);
  const channels = ['general', 'other', 'third'].map((n) => world.workspace.channelByName(n).id);
  const sam = world.workspace.userByLogin('sam@corp.example').id;
  const djbhs: string[] = [];
  const state: Array<{ decided: boolean; reminders: number }> = [];
  for (let i = 0; i < schedule.approvals; i++) {
    const djbh = `M${String(i).padStart(10, '0')}x`;
    djbhs.push(djbh);
    state.push({ decided: false, reminders: 0 });
    await store.createApproval(
      {
        djbh,
        teamId: world.workspace.teamId,
        channelId: channels[schedule.sameChannel ? 0 : i] ?? '',
        requesterSlackId: sam,
        requesterLogin: 'sam@corp.example',
        approverLogin: 'maria@corp.example',
        approverSlackId: world.approverId,
        title: `Model ${i}`,
        note: 'n',
        locale: 'en-US',
        createdAt: new Date(world.t),
      },
      new Date(world.t),
    );
  }
  const now = () => new Date(world.t);
  for (const op of schedule.ops) {
    // Facts are recorded at distinct moments, as a poll pass records them: the recorded order is
    // then the order of their times (ties within a moment are broken by id).
    world.t += 1;
    const s = state['approval' in op ? op.approval : 0];
    const djbh = djbhs['approval' in op ? op.approval : 0] ?? '';
    switch (op.op) {
      case 'decide':
        if (!s || s.decided) break;
        s.decided = true;
        await store.recordDecision(djbh, {
          decision: op.decision === 'agree' ? 'approved' : 'rejected',
          decidedBy: null,
          ended: true,
          now: now(),
          nextCheckAt: now(),
        });
        break;
      case 'remind':
        if (!s || s.decided) break;
        s.reminders++;
        await store.recordReminder(djbh, s.reminders, now());
        break;
      case 'escalate':
        // The store records it once, and only while the approver is reachable; the count of
        // delivered reminders is the poll pass's business, not the outbox's.
        if (!s || s.decided) break;
        await store.recordEscalation(djbh, {
          to: {
            login: 'chen@corp.example',
            chatId: world.workspace.userByLogin('chen@corp.example').id,
          },
          afterReminders: 0,
          reminders: Math.max(1, s.reminders),
          now: now(),
        });
        break;
      case 'end':
        if (!s || s.decided) break;
        s.decided = true;
        await store.finish(djbh, 'ended', now());
        break;
      case 'pass': {
        const replica = world.replicas[op.replica];
        if (replica?.alive) await world.pass(replica);
        break;
      }
      case 'advance':
        await world.advance(op.ms);
        break;
      case 'expire-leases':
        await world.expireLeases();
        break;
      case 'crash-at-store': {
        const replica = world.replicas[op.replica];
        if (replica) replica.crashAtStore = { after: op.after };
        break;
      }
      case 'restart': {
        const old = world.replicas[op.replica];
        if (old && !old.alive)
          world.replicas[op.replica] = world.startReplica(schedule.skewsMs[op.replica] ?? 0);
        break;
      }
      case 'redrive':
        await world.noteFailed();
        await store.redriveAnnouncements(now());
        break;
      case 'revoke':
        world.revoked = true;
        break;
      case 'restore':
        world.revoked = false;
        break;
    }
  }

  // Nothing failed that could still succeed: only what Slack refused for good.
  const failed = await store.failedAnnouncements(1000);
  for (const a of failed)
    expect(
      GIVE_UP.map((code) => `Slack: ${code}`),
      `${a.id} failed with "${a.lastError}"\n${world.trace.join('\n')}`,
    ).toContain(a.lastError);

  // Faults stop: every replica restarted, leases of the dead run out, time passes.
  world.stopFaults();
  for (const [i, r] of world.replicas.entries())
    if (!r.alive) world.replicas[i] = world.startReplica(schedule.skewsMs[i] ?? 0);
  await settle(world);
  await world.noteFailed();
  // An operator re-drives what failed, some time later.
  world.t += 20 * MINUTE;
  await store.redriveAnnouncements(now());
  await settle(world);

  const rows = await handle.db.selectFrom('announcements').selectAll().execute();
  const visible = new Map<string, number>();
  for (const m of world.workspace.messages) {
    const id = (m.metadata?.event_payload as { announcement_id?: string } | undefined)
      ?.announcement_id;
    if (id) visible.set(id, (visible.get(id) ?? 0) + 1);
  }
  const trace = () => `\n${world.trace.join('\n')}`;
  for (const [id, n] of visible) expect(n, `${id} visible ${n} times${trace()}`).toBe(1);
  for (const row of rows) {
    expect(
      ['sent', 'skipped'],
      `${row.id} ended ${row.state}: ${row.last_error}${trace()}`,
    ).toContain(row.state);
    const repeatable = ruleOf(row.kind as AnnouncementKind).repeatable;
    if (row.state === 'sent' && row.sent_ts && !repeatable)
      expect(visible.get(row.id), `${row.id} sent but not visible${trace()}`).toBe(1);
  }
  // Replies in a thread in recorded order (those never re-driven, whose order a re-drive resets).
  const order = new Map(
    [...rows]
      .sort((a, b) => Number(a.created_at) - Number(b.created_at) || (a.id < b.id ? -1 : 1))
      .map((row, i) => [row.id, i]),
  );
  const approvals = await handle.db.selectFrom('tracked_approvals').selectAll().execute();
  for (const approval of approvals) {
    if (!approval.message_ts) continue;
    const thread = world.workspace
      .replies(approval.channel_id, approval.message_ts)
      .map(
        (m) =>
          (m.metadata?.event_payload as { announcement_id?: string } | undefined)?.announcement_id,
      )
      .filter((id): id is string => id !== undefined && !world.everFailed.has(id));
    const ranks = thread.map((id) => order.get(id) ?? -1);
    expect(
      ranks,
      `thread of ${approval.djbh} out of order: ${thread.join(', ')}${trace()}`,
    ).toEqual([...ranks].sort((a, b) => a - b));
  }
}

/** Passes until nothing is pending, time moving on; at most a bounded number of rounds. */
async function settle(world: World): Promise<void> {
  for (let round = 0; round < 40; round++) {
    const pending = await world.store.pendingAnnouncements(1);
    if (pending.length === 0) return;
    await world.advance(11 * MINUTE);
    await world.expireLeases();
    for (const r of world.replicas) await world.pass(r);
  }
  const left = await world.store.pendingAnnouncements(100);
  expect(
    left.map((a) => `${a.id}: ${a.lastError}`),
    'still pending after faults stopped',
  ).toEqual([]);
}

async function clear(handle: DatabaseHandle): Promise<void> {
  await handle.db.deleteFrom('announcements').execute();
  await handle.db.deleteFrom('tracked_approvals').execute();
  await handle.db.deleteFrom('delivery_state').execute();
  await handle.db.deleteFrom('lane_leases').execute();
  await handle.db.deleteFrom('linked_accounts').execute();
}

/** Generated cases per run (MODEL_RUNS overrides, e.g. for a longer hunt). */
const RUNS = Number(process.env.MODEL_RUNS ?? 0);
/**
 * At least 1,000 cases per run in all: 300 of them on Postgres when it is there (a case costs
 * about twice as much there), the rest on SQLite.
 */
const POSTGRES_RUNS = 300;
const withPostgres = TEST_DATABASES.some((d) => d.name === 'postgres' && !d.skipReason);
const runsOn = (name: string) =>
  RUNS || (name === 'postgres' ? POSTGRES_RUNS : withPostgres ? 1000 - POSTGRES_RUNS : 1000);

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(`the outbox model on ${database.name}`, () => {
    let handle: DatabaseHandle;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const created = await database.create();
      drop = created.drop;
      handle = await openDatabase(created.url);
    });
    afterAll(async () => {
      await handle?.close();
      await drop?.();
    });

    it('delivers every announcement exactly once, in order, whatever the schedule', async () => {
      await fc.assert(
        fc.asyncProperty(scheduleArb, (schedule) => runCase(handle, schedule)),
        {
          numRuns: runsOn(database.name),
          verbose: 1,
          // Replays a reported failure: MODEL_SEED and MODEL_PATH from its report.
          ...(process.env.MODEL_SEED ? { seed: Number(process.env.MODEL_SEED) } : {}),
          ...(process.env.MODEL_PATH ? { path: process.env.MODEL_PATH } : {}),
          // Or runs a schedule given as JSON (a reported counterexample, edited) first.
          ...(process.env.MODEL_SCHEDULE
            ? { examples: [[JSON.parse(process.env.MODEL_SCHEDULE) as Schedule]] }
            : {}),
        },
      );
    }, 240_000);
  });
}
