import type { Kysely } from 'kysely';
import { sameLogin } from '../approvals/person.ts';
import type { EarlierReminder } from '../approvals/reminder-digest.ts';
import { loginIs } from './login-match.ts';
import type { Database } from './schema.ts';

/**
 * The last reminder DM posted to an approver, of any of their approvals (a digest is posted as one
 * approval's reminder): what reminder-digest.ts decides whether another reminder is covered by;
 * and the same for a leader's escalation DMs (escalation-digest.ts).
 */
export function createReminderPosts(db: Kysely<Database>) {
  return {
    lastReminderPost: (approverLogin: string) => lastPost(db, 'reminder', approverLogin),

    /**
     * The last escalation DM posted to a leader, of any approval escalated to them (a digest of
     * their escalations is posted as one approval's escalation): what escalation-digest.ts
     * decides whether another escalation is covered by.
     */
    lastEscalationPost: (leaderLogin: string) => lastPost(db, 'escalation', leaderLogin),

    /**
     * Whether another escalation to this leader may have been posted without the app knowing:
     * an attempt of it posted and its answer was lost (uncertain, and no search has settled it
     * yet), so that DM may be the digest that lists `a`'s approval too. See mayBePosted.
     */
    escalationMayBePosted: (leaderLogin: string, a: { id: string }) =>
      mayBePosted(db, 'escalation', leaderLogin, a),

    /** The same for another reminder to this approver, which may be the day's digest. */
    reminderMayBePosted: (approverLogin: string, a: { id: string }) =>
      mayBePosted(db, 'reminder', approverLogin, a),
  };
}

export type ReminderPosts = ReturnType<typeof createReminderPosts>;

/** Whose DM each kind is: the approval's approver (a reminder) or its leader (an escalation). */
const ADDRESSEE = {
  reminder: 't.approver_login',
  escalation: 't.escalated_to_login',
} as const;

/**
 * Whether another DM of `kind` to this person may have been posted without the app knowing: an
 * attempt of it posted and its answer was lost (uncertain, and no search has settled it yet). One
 * still in flight counts only when it comes before `a` in id order, so two in flight never wait
 * for each other. Not by when each was first attempted: that time is the dispatcher's clock at its
 * fill, so one attempted later could carry an earlier time (seen under load: the leader got two
 * digests). A search runs before every retry of an uncertain one, so two settled ones never wait
 * for each other for long.
 */
async function mayBePosted(
  db: Kysely<Database>,
  kind: 'reminder' | 'escalation',
  login: string,
  a: { id: string },
): Promise<boolean> {
  const rows = await db
    .selectFrom('announcements as a')
    .innerJoin('tracked_approvals as t', 't.djbh', 'a.djbh')
    .select([`${ADDRESSEE[kind]} as login`])
    .where(() => loginIs(ADDRESSEE[kind], login))
    .where('a.kind', '=', kind)
    // A reminder to this approver, not to whoever had the approval before them.
    .$if(kind === 'reminder', (q) => q.whereRef('a.seq', '>', 't.approver_from_seq'))
    .where('a.state', '=', 'pending')
    .where('a.uncertain', '=', 1)
    .where('a.id', '!=', a.id)
    .where('a.first_attempted_at', 'is not', null)
    .where((eb) => eb.or([eb('a.attempt_token', 'is', null), eb('a.id', '<', a.id)]))
    .limit(20)
    .execute();
  return rows.some((row) => row.login !== null && sameLogin(row.login, login));
}

/** The last DM of `kind` posted to this person, dated by the first announcement it told. */
async function lastPost(
  db: Kysely<Database>,
  kind: 'reminder' | 'escalation',
  login: string,
): Promise<EarlierReminder | undefined> {
  const row = await db
    .selectFrom('announcements as a')
    .innerJoin('tracked_approvals as t', 't.djbh', 'a.djbh')
    .select(['a.sent_channel', 'a.sent_ts', 'a.attempted_at', `${ADDRESSEE[kind]} as login`])
    // The one rule for logins (person.ts): one person, however the service cased it.
    .where(() => loginIs(ADDRESSEE[kind], login))
    .where('a.kind', '=', kind)
    // A reminder posted to this approver, not to whoever had the approval before them
    // (handover.ts); an escalation goes to one leader per approval, once.
    .$if(kind === 'reminder', (q) => q.whereRef('a.seq', '>', 't.approver_from_seq'))
    .where('a.state', '=', 'sent')
    .where('a.sent_ts', 'is not', null)
    .where('a.sent_ts', '!=', '')
    .orderBy('a.attempted_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row?.sent_channel || !row.sent_ts || row.attempted_at === null) return undefined;
  // Postgres's lower() folds more than the rule does (U+212A to k): someone else's DM is not
  // theirs, and this one goes out on its own.
  if (!sameLogin(row.login, login)) return undefined;
  // What a digest covered was recorded with its post, later: it was posted by the first of
  // them, and covers only what existed then.
  const first = await db
    .selectFrom('announcements')
    .select((eb) => eb.fn.min('attempted_at').as('at'))
    .where('kind', '=', kind)
    .where('sent_channel', '=', row.sent_channel)
    .where('sent_ts', '=', row.sent_ts)
    .executeTakeFirst();
  const at = Number(first?.at ?? row.attempted_at);
  const previousAt = await previousPostAt(db, kind, login, row.sent_ts, at);
  return {
    channel: row.sent_channel,
    ts: row.sent_ts,
    at: new Date(at),
    ...(previousAt ? { previousAt } : {}),
  };
}

/**
 * When the DM of `kind` before the one posted as `ts` (at `at`) was posted to the same person:
 * whether that one was the first of their day, the only one that lists everything waiting.
 */
async function previousPostAt(
  db: Kysely<Database>,
  kind: 'reminder' | 'escalation',
  login: string,
  ts: string,
  at: number,
): Promise<Date | undefined> {
  const to = kind === 'reminder' ? 't.approver_login' : 't.escalated_to_login';
  const row = await db
    .selectFrom('announcements as a')
    .innerJoin('tracked_approvals as t', 't.djbh', 'a.djbh')
    .select((eb) => eb.fn.max('a.attempted_at').as('at'))
    .where(() => loginIs(to, login))
    .where('a.kind', '=', kind)
    .where('a.state', '=', 'sent')
    .where('a.sent_ts', 'is not', null)
    .where('a.sent_ts', 'not in', ['', ts])
    .where('a.attempted_at', '<', at)
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? undefined : new Date(Number(row.at));
}
