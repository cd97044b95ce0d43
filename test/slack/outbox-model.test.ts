import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '@slack/logger';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AnnouncementDispatcher,
  createAnnouncementDispatcher,
} from '../../src/approvals/announcement-dispatcher.ts';
import { ruleOf } from '../../src/approvals/announcement-rules.ts';
import type { Announcer } from '../../src/approvals/announcer.ts';
import type { ClaimedApproval, UnchangedCheck } from '../../src/approvals/approval-repository.ts';
import type { ApprovalService, ApprovalStatus } from '../../src/approvals/approval-types.ts';
import type { AnnouncementClaim } from '../../src/approvals/outbox.ts';
import type { Announcement, AnnouncementKind } from '../../src/approvals/tracked-approval.ts';
import { announcementId } from '../../src/approvals/tracked-approval.ts';
import { type PollOptions, pollOnce } from '../../src/poller/poll-once.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createSlackAnnouncer } from '../../src/slack/delivery/slack-announcer.ts';
import { createIdentities } from '../../src/slack/people/identities.ts';
import { createSlackPeople } from '../../src/slack/people/slack-people.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

// A model-based test of the outbox: generated schedules of facts decided in the approval service,
// poll passes and delivery passes by one to three replicas with skewed clocks, crashes, lease
// expiry, re-drives, token revocation and, per Slack call, an outcome (success, the answer lost
// after Slack carried the call out, 5xx, 429 with Retry-After, a timeout before or after the call,
// a slow call while other replicas run, a hang while another replica takes over, a crash before or
// after, a post Slack commits 15 or 40 s after the client gave up, a 429 whose Retry-After is a
// month, or one of Slack's errors of each class), token outages of 30 hours, SIGTERMs that stop a
// replica in the middle of a poll pass, approvers whose Slack account is gone, and store faults:
// any store call of a replica failing before it reaches the database or after it committed (the
// answer lost with the connection), and the database refusing every write (a full disk, a
// read-only file) or every call (a failover) for a while, for every replica. The real store
// (SQLite, and Postgres when
// TEST_POSTGRES_URL is set), the real poll pass, the real dispatcher and the real Slack announcer
// with its real WebClient run against a model of the approval service and a model of Slack that
// remembers what was really posted.
//
// Why Slack is modelled at the fetch level (the WebClient's `fetch` option) rather than at the
// announcer port: the findings this test must catch live in the announcer (how errors are
// classified, where and from when it searches) as much as in the dispatcher, so the announcer has
// to run for real; calling the model in-process instead of over a socket keeps a case to a few
// milliseconds. Time is one controllable clock: replicas read it with their skew, attempt
// deadlines read it as their monotonic clock, and "a lease runs out" moves the database's leases
// into the past (leases are measured on the database's clock, which a test cannot move). So
// replicas overlap only where the schedule says so: a slow or hanging Slack call, or a slow check
// of the approval service, runs the other replicas' passes while it is in flight; a busy check
// runs every replica's delivery pass while the poll pass that made it waits (it read its clock
// before them, and records after them).
//
// Invariants, checked after every schedule: no announcement is ever visible twice; once faults
// stop, every fact the service decided is recorded and every announcement becomes visible exactly
// once (or is skipped as no longer worth it) within a bounded number of passes; replies in a
// thread appear in the order they were recorded (as seen from outside the store, never by
// anyone's clock); nothing is marked failed unless Slack refused it
// for good, or kept failing for the whole 24 h retry window not counting time delivery was paused
// (measured by the model on its own clock). And, watched while it runs (LaneWatch, ClaimWatch): no two posts or edits of one lane
// are at Slack at once across replicas, unless one of their attempts lost its lease; no two
// replicas check one approval at once while both hold their claim; a poll pass whose claim another
// pass has taken since records (and so announces) nothing; a poll pass told to stop claims and
// checks nothing more, and writes nothing once it has returned (the database closes then). After
// store faults: a pass a fault ended is over, and once the faults stop every replica's delivery
// and poll passes run again (no loop is left stopped: a delivery chain left rejected by one
// failed read had a replica deliver nothing for good), and everything is delivered exactly once,
// in order, within the bounded rounds of `settle`. A failure prints fast-check's seed and the
// shrunk schedule.

const T0 = Date.parse('2026-11-23T08:00:00Z');
const MINUTE = 60_000;
const LEASE_MS = 60_000;
const CALL_TIMEOUT_MS = 10_000;
const HOUR = 3_600_000;
/** As in production: the retry window, the cap on Retry-After and Slack's commit horizon. */
const RETRY_FOR_MS = 24 * HOUR;
const RETRY_AFTER_MAX_MS = 300_000;
const COMMIT_HORIZON_MS = 60_000;
/** Replicas' clocks are up to 2 minutes off: a window measured on them may end that much early. */
const SKEW_MARGIN_MS = 5 * MINUTE;
/** The poll pass as configured in production: its claims last its budget plus one check. */
const POLL_OPTIONS: PollOptions = {
  concurrency: 2,
  maxIntervalMs: 10 * MINUTE,
  giveUpAfterMs: 365 * 86_400_000,
  // Measured by pollOnce on the process's real clock, which a case never spends that much of:
  // claims run out only where the schedule says so.
  passBudgetMs: 45_000,
  leaseMs: 52_000,
};
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
  /** The client gives up waiting; Slack carries the call out `afterS` seconds later. */
  | { kind: 'late'; afterS: number }
  /** Slack carries the call out, then answers only after the lease ran out and others ran. */
  | { kind: 'hang' }
  /** Slack carries the call out and answers after the other replicas ran a pass, within the lease. */
  | { kind: 'slow' }
  /** The replica dies during the call; Slack carried it out when `done`. */
  | { kind: 'crash'; done: boolean }
  /** One of Slack's error codes; `done` for codes after which the call may have happened. */
  | { kind: 'error'; code: string; done: boolean };

/**
 * How the approval service answers one status check: at once, only after the pass's claim ran out
 * and another replica's poll pass took the same approvals (`slow`), a second later while every
 * replica's dispatcher ran a delivery pass and the pass still holds its claims (`busy`: what the
 * pass records then comes after what the deliveries recorded, though the pass read its clock
 * before them), with an error, or never (the replica dies).
 */
type CheckOutcome = 'ok' | 'slow' | 'busy' | 'fail' | 'crash';

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
  /** The approver decides in the approval service; a poll pass records it. */
  | { op: 'decide'; approval: number; decision: 'agree' | 'refuse' }
  /** A reminder is recorded (as a poll pass holding its claim would). */
  | { op: 'remind'; approval: number }
  /** Escalated to the approver's leader: a DM in that person's lane, and a note in the thread. */
  | { op: 'escalate'; approval: number }
  /** The service closes the approval without a decision; a poll pass records it. */
  | { op: 'end'; approval: number }
  | { op: 'poll'; replica: number }
  | { op: 'pass'; replica: number }
  | { op: 'advance'; ms: number }
  | { op: 'expire-leases' }
  | { op: 'crash-at-store'; replica: number; after: boolean }
  | { op: 'restart'; replica: number }
  | { op: 'redrive' }
  | { op: 'revoke' }
  | { op: 'restore' }
  /** Slack refuses the token for 30 hours (a replica's delivery pass meets it first), then accepts it. */
  | { op: 'long-outage'; replica: number }
  /** A poll pass of this replica is stopped (SIGTERM) at its first status check; the replica then exits. */
  | { op: 'stop-poll'; replica: number }
  /**
   * The replica's store call after the next `skip` ones fails: before it reaches the database
   * (nothing committed), or after it committed (the answer lost with the connection).
   */
  | { op: 'store-fault'; replica: number; after: boolean; skip: number }
  /**
   * From now on the database refuses every write (a full disk, a read-only file) or every call
   * (a failover, the database away), for every replica, until `db-back` or the faults stop.
   */
  | { op: 'db-outage'; refuses: 'writes' | 'everything' }
  | { op: 'db-back' };

interface Schedule {
  approvals: number;
  /** One channel for all, or one each (lanes shared or not). */
  sameChannel: boolean;
  /** The approver's Slack account is gone: every DM to them finds them unreachable. */
  approverGone: boolean;
  skewsMs: number[];
  ops: Op[];
  /**
   * Outcomes of the Slack calls in the order they are made, one stream per kind of call (posts,
   * edits, searches, the rest), so that a fault meets the call it was meant for as often as
   * not; `ok` once a stream is used up.
   */
  outcomes: Record<CallGroup, Outcome[]>;
  /** Outcomes of the status checks of the approval service, in the order they are made. */
  checks: CheckOutcome[];
}

const outcomeArb: fc.Arbitrary<Outcome> = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'ok' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'lost' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unavailable' as const }) },
  {
    weight: 2,
    // Now and then a month, from Slack or a proxy in front of it.
    arbitrary: fc
      .oneof(
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 30 }) },
        { weight: 1, arbitrary: fc.constant(2_592_000) },
      )
      .map((s) => ({ kind: 'rate-limited' as const, retryAfterS: s })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(15, 40).map((afterS) => ({ kind: 'late' as const, afterS })),
  },
  { weight: 1, arbitrary: fc.boolean().map((done) => ({ kind: 'timeout' as const, done })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'hang' as const }) },
  // Twice as often as a hang: the only way two replicas hold lanes at once (finding 5).
  { weight: 2, arbitrary: fc.constant({ kind: 'slow' as const }) },
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
    { weight: 5, arbitrary: replica.map((r) => ({ op: 'poll' as const, replica: r })) },
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
    { weight: 1, arbitrary: replica.map((r) => ({ op: 'long-outage' as const, replica: r })) },
    { weight: 1, arbitrary: replica.map((r) => ({ op: 'stop-poll' as const, replica: r })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ replica, after: fc.boolean(), skip: fc.integer({ min: 0, max: 3 }) })
        .map((o) => ({ op: 'store-fault' as const, ...o })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('writes' as const, 'everything' as const)
        .map((refuses) => ({ op: 'db-outage' as const, refuses })),
    },
    { weight: 1, arbitrary: fc.constant({ op: 'db-back' as const }) },
  );
};

const scheduleArb: fc.Arbitrary<Schedule> = fc
  .record({ approvals: fc.integer({ min: 1, max: 3 }), replicas: fc.integer({ min: 1, max: 3 }) })
  .chain(({ approvals, replicas }) =>
    fc.record({
      approvals: fc.constant(approvals),
      sameChannel: fc.boolean(),
      approverGone: fc.boolean(),
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
      checks: fc.array(
        fc.oneof(
          { weight: 6, arbitrary: fc.constant('ok' as const) },
          { weight: 2, arbitrary: fc.constant('slow' as const) },
          { weight: 2, arbitrary: fc.constant('busy' as const) },
          { weight: 1, arbitrary: fc.constantFrom('fail' as const, 'crash' as const) },
        ),
        { maxLength: 10 },
      ),
    }),
  );

const never = () => new Promise<never>(() => {});

/** A store call the schedule made fail (the database away, refusing writes, or a lost answer). */
class StoreFault extends Error {
  readonly code: string;
  constructor(code: string, call: string) {
    super(`store fault ${code} at ${call}`);
    this.code = code;
  }
}
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

/** One delivery attempt, as the store granted it: its lane, and whether its lease ran out since. */
interface Attempt {
  lane: string;
  leaseLost: boolean;
}

/** Names an attempt: an announcement is claimed only at the number of attempts it was read with. */
const attemptKey = (a: { id: string; attempts: number }) => `${a.id}#${a.attempts}`;

/**
 * Watches posts and edits at Slack by lane (finding 5: lanes exclusive only inside one process).
 * A lane (a channel, an approver's DM, a request message's edits) is served by one attempt at a
 * time, fleet-wide: so at no moment are two calls that post or edit in one lane in flight at
 * Slack at once, unless one of their attempts lost its lease (the schedule let it run out, or the
 * call hangs past it), after which another replica may rightly take the lane. Two posts at once
 * in one channel trip Slack's per-channel limit, and replies or edits could land out of order.
 * (Pace is not watched: it is measured on the database's real clock, which the model's virtual
 * time does not move.)
 */
class LaneWatch {
  private readonly attempts = new Map<string, Attempt>();
  private readonly inFlight = new Set<{ attempt: Attempt; call: string }>();
  readonly violations: string[] = [];

  claimed(key: string, lane: string): void {
    this.attempts.set(key, { lane, leaseLost: false });
  }

  leasesRanOut(): void {
    for (const attempt of this.attempts.values()) attempt.leaseLost = true;
  }

  /** A post or an edit of attempt `key` sets out; answers what to call once it is over. */
  setsOut(key: string | undefined, call: string): () => void {
    const attempt = key === undefined ? undefined : this.attempts.get(key);
    if (!attempt) return () => {};
    for (const other of this.inFlight)
      if (
        other.attempt !== attempt &&
        other.attempt.lane === attempt.lane &&
        !other.attempt.leaseLost &&
        !attempt.leaseLost
      )
        this.violations.push(`${call} in lane ${attempt.lane} while ${other.call} was in flight`);
    const entry = { attempt, call };
    this.inFlight.add(entry);
    return () => this.inFlight.delete(entry);
  }
}

/** A poll pass's claim of one approval; `held` until recorded, given back or run out. */
interface CheckClaim {
  djbh: string;
  token: string;
  held: boolean;
}

/**
 * Watches poll passes (finding 6: check leases not fenced). Checks of one approval never overlap
 * across replicas while both hold their claim; and a pass whose claim another pass has taken
 * since (its own ran out meanwhile) records nothing, so it announces nothing either: no decision
 * recorded twice, no announcement for a fact found by a stale pass.
 */
class ClaimWatch {
  /** The latest claim of each approval: the only one that may record. */
  private readonly latest = new Map<string, CheckClaim>();
  private readonly checking = new Set<{ claim: CheckClaim; replica: Replica }>();
  readonly violations: string[] = [];

  claimed(replica: Replica, claims: ClaimedApproval[]): void {
    for (const { approval: a, claim: token } of claims) {
      const claim = { djbh: a.djbh, token: token ?? '', held: true };
      this.latest.set(a.djbh, claim);
      replica.claims.set(a.djbh, claim);
    }
  }

  leasesRanOut(): void {
    for (const claim of this.latest.values()) claim.held = false;
  }

  /** The store answered `recorded` to `what`, fenced by `token` (a record ends the claim). */
  recorded(what: string, djbh: string, token: unknown, recorded: boolean, ends: boolean): void {
    const latest = this.latest.get(djbh);
    if (recorded && typeof token === 'string' && latest?.token !== token)
      this.violations.push(`${what} of ${djbh} recorded by a pass that lost its claim`);
    if (ends && latest && latest.token === token) latest.held = false;
  }

  /** Replica `replica` asks the service about `djbh`; answers what to call once it has answered. */
  checks(replica: Replica, djbh: string): () => void {
    const claim = replica.claims.get(djbh);
    if (!claim) return () => {};
    for (const other of this.checking)
      if (other.replica !== replica && other.claim.djbh === djbh && other.claim.held && claim.held)
        this.violations.push(`${djbh} checked by two replicas at once, both holding their claim`);
    const entry = { claim, replica };
    this.checking.add(entry);
    return () => this.checking.delete(entry);
  }
}

/** Where the claim argument is in each poll-pass write of the store, and whether it ends a claim. */
const FENCED_WRITES: Partial<Record<keyof ApprovalStores, { claimAt: number; ends: boolean }>> = {
  recordCheck: { claimAt: 2, ends: true },
  recordDecision: { claimAt: 2, ends: true },
  finish: { claimAt: 3, ends: true },
  giveUp: { claimAt: 2, ends: true },
  recordReminder: { claimAt: 3, ends: false },
  releaseClaim: { claimAt: 1, ends: true },
};

interface Replica {
  alive: boolean;
  dead: Promise<void>;
  kill(): void;
  dispatcher: AnnouncementDispatcher;
  /** The store as this replica sees it (it dies with the replica, and is watched). */
  store: ApprovalStores;
  service: Pick<ApprovalService, 'getStatus'>;
  /** The approvals this replica's poll passes claimed, by number: the claim each check holds. */
  claims: Map<string, CheckClaim>;
  /** Crash at the next write to the store, before or after it is made. */
  crashAtStore: { after: boolean } | undefined;
  /** A store call fails (after `skip` more), before it reaches the database or after it committed. */
  storeFault: { after: boolean; skip: number } | undefined;
  /** How far this replica's clock is off: its poll passes and its dispatcher read it. */
  skew: number;
  /** A poll pass told to stop: aborted at its first status check, then watched (StopWatch). */
  stopping: { controller: AbortController; stopped: boolean } | undefined;
  /** Stopped, and its database closed: it must write nothing more. */
  closed: boolean;
}

/**
 * Watches stops (SIGTERM during a poll pass): once told to stop, the pass claims and checks
 * nothing more; once it has returned (the database closes then), its replica writes nothing.
 */
class StopWatch {
  readonly violations: string[] = [];

  claims(replica: Replica): void {
    if (replica.stopping?.stopped) this.violations.push('a poll pass claimed after its stop');
  }

  checks(replica: Replica, djbh: string): void {
    if (replica.stopping?.stopped)
      this.violations.push(`a poll pass began checking ${djbh} after its stop`);
  }

  writes(replica: Replica, what: string): void {
    if (replica.closed) this.violations.push(`${what} after the database closed`);
  }
}

/**
 * The model's own account of paused delivery (on its clock), to judge a failure for time: only
 * time delivery was trying counts against the retry window.
 */
class PauseWatch {
  private since: number | undefined;
  private readonly spans: Array<[number, number]> = [];
  /** When each announcement was marked failed, on the model's clock. */
  readonly failedAt = new Map<string, number>();

  paused(t: number): void {
    this.since ??= t;
  }

  resumed(t: number): void {
    if (this.since !== undefined) this.spans.push([this.since, t]);
    this.since = undefined;
  }

  /** Time between `from` and `to` when delivery was not paused. */
  unpaused(from: number, to: number): number {
    const spans: Array<[number, number]> =
      this.since === undefined ? this.spans : [...this.spans, [this.since, to]];
    let paused = 0;
    for (const [a, b] of spans) paused += Math.max(0, Math.min(b, to) - Math.max(a, from));
    return to - from - paused;
  }
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
  /** The database refuses writes, or everything, for every replica (db-outage until db-back). */
  dbOutage: 'writes' | 'everything' | undefined;
  /** What the approval service says of each approval (the approver decides there). */
  readonly service = new Map<string, ApprovalStatus>();
  readonly lanes = new LaneWatch();
  readonly claims = new ClaimWatch();
  readonly stops = new StopWatch();
  readonly pauses = new PauseWatch();
  /** Posts Slack carries out after the client gave up (`late`), due at a moment of the model's clock. */
  private lateCommits: Array<{ at: number; carryOut: () => Promise<unknown> }> = [];
  /** The attempt a post or an edit belongs to, carried from the dispatcher's call to `fetch`. */
  private readonly attemptOfCall = new AsyncLocalStorage<string>();
  private outcomes: Record<CallGroup, Outcome[]>;
  private checks: CheckOutcome[];
  private interleaving = false;
  /** Announcements that failed at some point (re-drives change their recorded order). */
  readonly everFailed = new Set<string>();
  readonly trace: string[] = [];
  /**
   * The order announcements were recorded in, as seen from outside the store: after each write
   * returns, what is new gets the next rank. Facts recorded by writes that overlapped share a
   * rank (their order is not defined). Never read from the store's own ordering, and whatever the
   * clocks of those who recorded them: replicas' clocks are skewed, and a poll pass records with
   * the moment it started.
   */
  readonly recordedRank = new Map<string, number>();
  private ranks = 0;

  constructor(
    readonly store: ApprovalStores,
    readonly db: DatabaseHandle,
    readonly schedule: Schedule,
  ) {
    this.outcomes = {
      posts: [...schedule.outcomes.posts],
      edits: [...schedule.outcomes.edits],
      searches: [...schedule.outcomes.searches],
      others: [...schedule.outcomes.others],
    };
    this.checks = [...schedule.checks];
    for (const skew of schedule.skewsMs) this.replicas.push(this.startReplica(skew));
  }

  get approverId(): string {
    return this.workspace.userByLogin('maria@corp.example').id;
  }

  stopFaults(): void {
    this.outcomes = { posts: [], edits: [], searches: [], others: [] };
    this.checks = [];
    this.revoked = false;
    for (const r of this.replicas) {
      r.crashAtStore = undefined;
      r.storeFault = undefined;
    }
    this.dbOutage = undefined;
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
      storeFault: undefined,
      skew,
      stopping: undefined,
      closed: false,
      dispatcher: undefined as unknown as AnnouncementDispatcher,
      store: this.store,
      service: { getStatus: (djbh) => this.checkStatus(replica, djbh) },
      claims: new Map(),
    };
    const store = this.guardedStore(replica);
    replica.store = store;
    const client = new WebClient('xoxb-model', {
      slackApiUrl: 'https://slack.model/api/',
      // The model answers with Node's own Response, which the client's narrower type describes.
      fetch: this.slackFetch(replica) as unknown as WebClientOptions['fetch'],
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      logger: silent,
    });
    const people = createSlackPeople(client, () => this.t);
    const links = createAccountLinkStore(this.db.db, this.db.dialect);
    const announcer = this.watchedAnnouncer(
      createSlackAnnouncer({
        client,
        people,
        identities: createIdentities({ people, links }),
        channelLanguage: 'en',
        giveUpAfterDays: 30,
        sentDm: (djbh) => store.sentPost(announcementId(djbh, 'approver-dm')),
        sentPost: (id) => store.sentPost(id),
      }),
    );
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
        retryForMs: RETRY_FOR_MS,
        retryAfterMaxMs: RETRY_AFTER_MAX_MS,
        commitHorizonMs: COMMIT_HORIZON_MS,
        laneIntervalMs: 0,
        // As in production: a lane is claimed ahead of its pace (after a 429's Retry-After).
        laneLookaheadMs: 250,
        concurrency: 4,
        idleMs: 1000,
        pauseCheckMs: 0,
      },
    );
    return replica;
  }

  /**
   * The real store; a dead replica's calls never return (it has no process any more). What it
   * grants and records is told to the watches.
   */
  guardedStore(replica: Replica): ApprovalStores {
    const store = this.store;
    const world = this;
    const writes = new Set([
      'claimAnnouncement',
      'markAnnouncementSent',
      'markAnnouncementRetry',
      'markAnnouncementFinal',
      'pauseDelivery',
      'resumeDelivery',
      'claimDue',
      'recordChecks',
      ...Object.keys(FENCED_WRITES),
    ]);
    const observe = (key: keyof ApprovalStores, args: unknown[], result: unknown) => {
      if (key === 'claimAnnouncement' && result) {
        const lane = (result as AnnouncementClaim).lane;
        if (lane) this.lanes.claimed(attemptKey(args[0] as Announcement), lane);
      }
      if (key === 'claimDue') this.claims.claimed(replica, result as ClaimedApproval[]);
      if (key === 'pauseDelivery' && result === true) this.pauses.paused(this.t);
      if (key === 'resumeDelivery' && result === true) this.pauses.resumed(this.t);
      if (key === 'markAnnouncementFinal' && result === true && args[1] === 'failed')
        this.pauses.failedAt.set((args[0] as AnnouncementClaim).id, this.t);
      if (key === 'recordChecks') {
        const recorded = new Set(
          (result as Array<{ djbh: string; claim: string | null }>).map(
            (r) => `${r.djbh} ${r.claim}`,
          ),
        );
        for (const check of args[0] as UnchangedCheck[])
          this.claims.recorded(
            key,
            check.djbh,
            check.claim,
            recorded.has(`${check.djbh} ${check.claim}`),
            true,
          );
      }
      const fenced = FENCED_WRITES[key];
      if (fenced)
        this.claims.recorded(
          key,
          String(args[0]),
          args[fenced.claimAt],
          result === true,
          fenced.ends,
        );
    };
    const stops = this.stops;
    return new Proxy(store, {
      get(target, key: keyof ApprovalStores) {
        const original = target[key] as (...args: unknown[]) => Promise<unknown>;
        return async (...args: unknown[]) => {
          if (writes.has(key)) stops.writes(replica, key);
          if (!replica.alive) return never();
          if (key === 'claimDue') stops.claims(replica);
          const crash = writes.has(key) ? replica.crashAtStore : undefined;
          if (crash) replica.crashAtStore = undefined;
          if (crash && !crash.after) {
            replica.kill();
            return never();
          }
          const outage = world.dbOutage;
          if (outage === 'everything' || (outage === 'writes' && writes.has(key)))
            throw new StoreFault(outage === 'writes' ? 'SQLITE_READONLY' : 'ECONNREFUSED', key);
          const fault = replica.storeFault?.skip === 0 ? replica.storeFault : undefined;
          if (replica.storeFault) replica.storeFault.skip--;
          if (fault) replica.storeFault = undefined;
          if (fault && !fault.after) throw new StoreFault('ECONNRESET', key);
          const result = await original.apply(target, args);
          if (writes.has(key)) await world.noteRecorded();
          observe(key, args, result);
          if (crash) replica.kill();
          if (!replica.alive) return never();
          // Committed, and the answer lost with the connection.
          if (fault) throw new StoreFault('ECONNRESET', `${key} (after it committed)`);
          return result;
        };
      },
    });
  }

  /** The real announcer; each delivery's calls carry the attempt they belong to, for LaneWatch. */
  watchedAnnouncer(announcer: Announcer): Announcer {
    return {
      ...announcer,
      deliver: (a, approval, clock) =>
        this.attemptOfCall.run(attemptKey(a), () => announcer.deliver(a, approval, clock)),
    };
  }

  /** The approval service as the model answers a status check, with its outcome from the schedule. */
  async checkStatus(replica: Replica, djbh: string): Promise<ApprovalStatus> {
    if (!replica.alive) return never();
    this.stops.checks(replica, djbh);
    // SIGTERM arrives while the pass's first check is under way.
    if (replica.stopping && !replica.stopping.stopped) {
      replica.stopping.stopped = true;
      replica.stopping.controller.abort();
    }
    const drawn = this.checks.shift() ?? 'ok';
    const outcome = (drawn === 'slow' || drawn === 'busy') && this.interleaving ? 'ok' : drawn;
    this.trace.push(`getStatus ${djbh} ${outcome}`);
    // The service answers what it knew when asked.
    const status = this.service.get(djbh) ?? { decision: 'pending', ended: false, unknown: false };
    const answered = this.claims.checks(replica, djbh);
    try {
      switch (outcome) {
        case 'ok':
          return status;
        case 'slow':
          await this.interleaveChecks(replica);
          return status;
        case 'busy':
          await this.interleaveDeliveries();
          return status;
        case 'fail':
          throw new Error('Approval service, GET /status: HTTP 503');
        case 'crash':
          replica.kill();
          return never();
      }
    } finally {
      answered();
    }
  }

  /** Slack's Web API as the model answers it, with this call's outcome from the schedule. */
  slackFetch(replica: Replica): typeof fetch {
    return async (input, init) => {
      if (!replica.alive) return never();
      await this.commitLate();
      const method = String(input).split('/').pop() ?? '';
      const args: Record<string, unknown> = Object.fromEntries(
        new URLSearchParams(String(init?.body ?? '')),
      );
      delete args.token;
      if (this.revoked) return answer(200, { ok: false, error: 'token_revoked' });
      if (this.schedule.approverGone && method === 'users.info' && args.user === this.approverId)
        return answer(200, { ok: false, error: UNREACHABLE });
      const outcome = this.applicable(
        this.outcomes[groupOf(method)].shift() ?? { kind: 'ok' },
        method,
        args,
      );
      this.trace.push(`${method} ${outcome.kind}${'code' in outcome ? `:${outcome.code}` : ''}`);
      const carryOut = async () => {
        return this.workspace.call(method, args);
      };
      const postsOrEdits = groupOf(method) === 'posts' || groupOf(method) === 'edits';
      const answered = postsOrEdits
        ? this.lanes.setsOut(this.attemptOfCall.getStore(), `${method} ${args.channel}`)
        : () => {};
      let response: Response | undefined;
      try {
        response = await this.respond(outcome, replica, carryOut);
      } finally {
        answered();
      }
      return response ?? never();
    };
  }

  /** How the model answers a call that met `outcome`; undefined when the replica died in it. */
  private async respond(
    outcome: Outcome,
    replica: Replica,
    carryOut: () => Promise<unknown>,
  ): Promise<Response | undefined> {
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
      case 'late':
        this.t += CALL_TIMEOUT_MS;
        this.lateCommits.push({ at: this.t + outcome.afterS * 1000, carryOut });
        throw new Error('The operation was aborted due to timeout');
      case 'hang': {
        const body = await carryOut();
        await this.interleave(replica);
        return answer(200, body);
      }
      case 'slow': {
        const body = await carryOut();
        await this.whileInFlight(replica, (r) => this.pass(r));
        return answer(200, body);
      }
      case 'crash':
        if (outcome.done) await carryOut();
        replica.kill();
        return undefined;
      case 'error':
        if (outcome.done) await carryOut();
        return answer(200, { ok: false, error: outcome.code });
    }
  }

  /** Ranks the announcements recorded since the last look (see recordedRank). */
  async noteRecorded(): Promise<void> {
    const rows = await this.db.db.selectFrom('announcements').select('id').execute();
    const fresh = rows.filter((r) => !this.recordedRank.has(r.id));
    if (fresh.length === 0) return;
    this.ranks++;
    for (const r of fresh) this.recordedRank.set(r.id, this.ranks);
  }

  /** Codes only where Slack answers them; elsewhere the call just succeeds. */
  private applicable(outcome: Outcome, method: string, args: Record<string, unknown>): Outcome {
    if ((outcome.kind === 'hang' || outcome.kind === 'slow') && this.interleaving)
      return { kind: 'ok' };
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
    await this.advance(LEASE_MS);
    await this.expireLeases();
    await this.whileInFlight(stalled, (r) => this.pass(r));
  }

  /**
   * While a check is slow: the pass's claims run out and the other replicas run a poll pass,
   * which takes the same approvals.
   */
  async interleaveChecks(stalled: Replica): Promise<void> {
    await this.advance(POLL_OPTIONS.leaseMs);
    await this.expireLeases();
    await this.whileInFlight(stalled, (r) => this.poll(r));
  }

  /**
   * While a check takes a second: every replica's dispatcher (the checking one's too: it runs
   * beside its poll pass) runs a delivery pass; the pass's claims still hold.
   */
  async interleaveDeliveries(): Promise<void> {
    await this.advance(1000);
    this.interleaving = true;
    try {
      for (const r of this.replicas) if (r.alive) await this.pass(r);
    } finally {
      this.interleaving = false;
    }
  }

  /** Runs `run` on every other live replica while `stalled` waits; nothing else stalls meanwhile. */
  private async whileInFlight(stalled: Replica, run: (r: Replica) => Promise<void>): Promise<void> {
    this.interleaving = true;
    try {
      for (const r of this.replicas) if (r !== stalled && r.alive) await run(r);
    } finally {
      this.interleaving = false;
    }
  }

  /**
   * One poll pass, on the replica's own (skewed) clock, read once when the pass starts. A pass
   * that a store fault ended is over (the schedule tries again at its next tick).
   */
  async poll(replica: Replica): Promise<void> {
    await Promise.race([
      pollOnce(
        { store: replica.store, service: replica.service, logger: quiet },
        POLL_OPTIONS,
        // The replica's own clock, read once when the pass starts, as in production.
        new Date(this.t + replica.skew),
      ).catch((error: unknown) => this.storeFaultOnly(error, 'poll pass')),
      replica.dead,
    ]);
  }

  /** One delivery pass; one that a store fault ended is over (the loop backs off and tries again). */
  async pass(replica: Replica): Promise<void> {
    await Promise.race([
      (async () => {
        await replica.dispatcher.checkPause();
        await replica.dispatcher.pass();
      })().catch((error: unknown) => this.storeFaultOnly(error, 'delivery pass')),
      replica.dead,
    ]);
  }

  /** A store fault ends a pass and is traced; anything else is the case's failure. */
  storeFaultOnly(error: unknown, what: string): void {
    if (!(error instanceof StoreFault)) throw error;
    this.trace.push(`${what} ended by ${error.message}`);
  }

  async expireLeases(): Promise<void> {
    this.lanes.leasesRanOut();
    this.claims.leasesRanOut();
    await this.db.db
      .updateTable('tracked_approvals')
      .set({ lease_until: 0 })
      .where('lease_until', 'is not', null)
      .execute();
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

  /**
   * The database's clock moves on too (the test cannot move it, so what is measured on it is moved
   * back): lanes paced by Retry-After may post again, a pause has lasted longer, a commit horizon
   * comes nearer. Slack carries out the late posts that fall due.
   */
  async advance(ms: number): Promise<void> {
    this.t += ms;
    if (ms >= 30_000)
      await this.db.db.updateTable('lane_leases').set({ next_post_at: 0 }).execute();
    await this.db.db
      .updateTable('delivery_state')
      .set((eb) => ({ paused_at_db: eb('paused_at_db', '-', ms) }))
      .where('paused_at_db', 'is not', null)
      .execute();
    await this.db.db
      .updateTable('announcements')
      .set((eb) => ({ commit_horizon_at: eb('commit_horizon_at', '-', ms) }))
      .where('commit_horizon_at', 'is not', null)
      .execute();
    await this.commitLate();
  }

  /** Carries out the late posts whose moment has come, in order. */
  async commitLate(): Promise<void> {
    const due = this.lateCommits.filter((c) => c.at <= this.t).sort((a, b) => a.at - b.at);
    this.lateCommits = this.lateCommits.filter((c) => c.at > this.t);
    for (const c of due) await c.carryOut();
  }

  /**
   * One poll pass told to stop at its first status check (SIGTERM); once it has returned, the
   * replica exits and its database is closed.
   */
  async stopPoll(replica: Replica): Promise<void> {
    const controller = new AbortController();
    replica.stopping = { controller, stopped: false };
    await Promise.race([
      pollOnce(
        { store: replica.store, service: replica.service, logger: quiet },
        POLL_OPTIONS,
        new Date(this.t),
        controller.signal,
      ).catch((error: unknown) => this.storeFaultOnly(error, 'stopped poll pass')),
      replica.dead,
    ]);
    if (!replica.alive) return;
    replica.closed = true;
    replica.kill();
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
  const store = createApprovalStores(handle.db, handle.dialect);
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
        slack: { channelId: channels[schedule.sameChannel ? 0 : i] ?? '' },
        parties: {
          requester: { slackId: sam, login: 'sam@corp.example' },
          approver: { login: 'maria@corp.example', slackId: world.approverId },
        },
        request: { title: `Model ${i}`, note: 'n', locale: 'en-US', createdAt: new Date(world.t) },
      },
      new Date(world.t),
    );
    await world.noteRecorded();
  }
  const now = () => new Date(world.t);
  for (const op of schedule.ops) {
    // Facts are recorded at distinct moments of the model's clock; poll passes and deliveries read
    // their replica's skewed one. The thread's order is judged by when they were recorded
    // (recordedRank), never by anyone's clock.
    world.t += 1;
    const s = state['approval' in op ? op.approval : 0];
    const djbh = djbhs['approval' in op ? op.approval : 0] ?? '';
    switch (op.op) {
      case 'decide':
        if (!s || s.decided) break;
        s.decided = true;
        world.service.set(djbh, {
          decision: op.decision === 'agree' ? 'approved' : 'rejected',
          ended: true,
          unknown: false,
        });
        break;
      case 'remind':
        if (!s || s.decided) break;
        s.reminders++;
        await store.recordReminder(djbh, s.reminders, now());
        await world.noteRecorded();
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
          answerWithinMs: 0,
          now: now(),
        });
        await world.noteRecorded();
        break;
      case 'end':
        if (!s || s.decided) break;
        s.decided = true;
        world.service.set(djbh, { decision: 'pending', ended: true, unknown: false });
        break;
      case 'poll': {
        const replica = world.replicas[op.replica];
        if (replica?.alive) await world.poll(replica);
        break;
      }
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
      case 'long-outage': {
        world.revoked = true;
        const replica = world.replicas[op.replica];
        if (replica?.alive) await world.pass(replica);
        await world.advance(30 * HOUR);
        world.revoked = false;
        break;
      }
      case 'store-fault': {
        const replica = world.replicas[op.replica];
        if (replica) replica.storeFault = { after: op.after, skip: op.skip };
        break;
      }
      case 'db-outage':
        world.dbOutage = op.refuses;
        break;
      case 'db-back':
        world.dbOutage = undefined;
        break;
      case 'stop-poll': {
        const replica = world.replicas[op.replica];
        if (replica?.alive) await world.stopPoll(replica);
        break;
      }
    }
  }

  expectNothingOverlapped(world);
  // Nothing failed that could still succeed: only what Slack refused for good, or what kept
  // failing for the whole retry window, time paused not counted.
  const failed = await store.failedAnnouncements(1000);
  for (const a of failed) {
    const failedAt = world.pauses.failedAt.get(a.id) ?? world.t;
    const from = (a.redrivenAt ?? a.createdAt).getTime();
    const timedOut =
      a.lastError?.startsWith('still failing after') &&
      world.pauses.unpaused(from, failedAt) >= RETRY_FOR_MS - SKEW_MARGIN_MS;
    if (timedOut) continue;
    expect(
      GIVE_UP.map((code) => `Slack: ${code}`),
      `${a.id} failed with "${a.lastError}" after ${Math.round(world.pauses.unpaused(from, failedAt) / 60_000)} min unpaused\n${world.trace.join('\n')}`,
    ).toContain(a.lastError);
  }

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
  // No loop is left stopped by a fault: every replica's delivery and poll pass still run (a
  // delivery chain left rejected by one failed read failed every pass after it).
  for (const [i, r] of world.replicas.entries()) {
    const alive = async (what: string, run: () => Promise<unknown>) =>
      expect(
        await run().then(
          () => 'runs',
          (error: unknown) => `fails: ${error instanceof Error ? error.message : String(error)}`,
        ),
        `replica ${i}'s ${what} after the faults stopped${`\n${world.trace.join('\n')}`}`,
      ).toBe('runs');
    await alive('delivery pass', () => r.dispatcher.pass(now()));
    await alive('poll pass', () =>
      pollOnce({ store: r.store, service: r.service, logger: quiet }, POLL_OPTIONS, now()),
    );
  }

  const rows = await handle.db.selectFrom('announcements').selectAll().execute();
  const visible = new Map<string, number>();
  for (const m of world.workspace.messages) {
    const id = (m.metadata?.event_payload as { announcement_id?: string } | undefined)
      ?.announcement_id;
    if (id) visible.set(id, (visible.get(id) ?? 0) + 1);
  }
  const trace = () => `\n${world.trace.join('\n')}`;
  expectNothingOverlapped(world);
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
  // Replies in a thread in recorded order: none went out before one recorded before it (among
  // those that never failed: a failed one waits for a re-drive while the rest go on).
  const rank = (id: string) => world.recordedRank.get(id) ?? Number.NaN;
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
    const overtaken = thread.flatMap((id, i) =>
      thread
        .slice(i + 1)
        .filter((later) => rank(later) < rank(id))
        .map((later) => `${id} went out before ${later}, recorded before it`),
    );
    expect(
      overtaken,
      `thread of ${approval.djbh} out of order: ${thread.join(', ')}${trace()}`,
    ).toEqual([]);
  }
}

/** What LaneWatch and ClaimWatch saw that must never happen (findings 5 and 6). */
function expectNothingOverlapped(world: World): void {
  const trace = `\n${world.trace.join('\n')}`;
  expect(world.lanes.violations, `two calls in one lane at once${trace}`).toEqual([]);
  expect(world.claims.violations, `a poll pass overlapped or outlived its claim${trace}`).toEqual(
    [],
  );
  expect(world.stops.violations, `a stopped poll pass went on${trace}`).toEqual([]);
}

/** Facts the service decided that are not recorded yet: a poll pass still has to find them. */
async function unrecordedFacts(world: World): Promise<string[]> {
  const approvals = await world.db.db.selectFrom('tracked_approvals').selectAll().execute();
  return approvals.flatMap((a) => {
    const status = world.service.get(a.djbh);
    return status?.ended && (a.tracking === 'active' || a.decision !== status.decision)
      ? [`${a.djbh}: ${status.decision} in the service, ${a.decision} (${a.tracking}) recorded`]
      : [];
  });
}

/**
 * Poll and delivery passes until every fact is recorded and nothing is pending, time moving on;
 * at most a bounded number of rounds.
 */
async function settle(world: World): Promise<void> {
  for (let round = 0; round < 40; round++) {
    const pending = await world.store.pendingAnnouncements(1);
    if (pending.length === 0 && (await unrecordedFacts(world)).length === 0) return;
    await world.advance(11 * MINUTE);
    await world.expireLeases();
    for (const r of world.replicas) await world.poll(r);
    for (const r of world.replicas) await world.pass(r);
  }
  const left = await world.store.pendingAnnouncements(100);
  expect(await unrecordedFacts(world), 'facts not recorded after faults stopped').toEqual([]);
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

    // The cases are counted, not timed: about 40 s alone, many times that on a busy machine.
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
    }, 900_000);
  });
}
