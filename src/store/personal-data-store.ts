import { type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import { isDirectConversation } from '../approvals/conversation.ts';
import type { Person } from '../approvals/person.ts';
import {
  erasedLane,
  isTheirs,
  lanesOf,
  type PersonalData,
  type PersonalDataSection,
  type PersonKeys,
  withoutThem,
} from '../approvals/personal-data.ts';
import type { DialectName } from './database.ts';
import { dbNowMs } from './db-clock.ts';
import { chainSections, openChains } from './personal-data-chains.ts';
import type { Database, TrackedApprovalRow } from './schema.ts';

type Db = Kysely<Database>;
type Approvals = ExpressionBuilder<Database, 'tracked_approvals'>;

/** `lower(column)` is one of the logins (compared as the store compares logins: login-match.ts). */
function loginIn(column: string, logins: readonly string[]) {
  return sql<SqlBool>`lower(${sql.ref(column)}) in (${sql.join(logins.map((l) => sql`lower(${l})`))})`;
}

/** A LIKE pattern matching `text` anywhere, its own % _ and \ taken literally. */
const containing = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Approvals that name the person in any role (a superset: the caller checks each with isTheirs). */
function namesThem(eb: Approvals, keys: PersonKeys) {
  const { slackIds, logins } = keys;
  const any = [];
  if (logins.length > 0)
    for (const column of ['requester_login', 'approver_login', 'decided_by', 'escalated_to_login'])
      any.push(loginIn(column, logins));
  if (slackIds.length > 0)
    for (const column of [
      'requester_slack_id',
      'approver_slack_id',
      'escalated_to_slack_id',
    ] as const)
      any.push(eb(column, 'in', [...slackIds]));
  for (const key of [...logins, ...slackIds])
    any.push(sql<SqlBool>`lower(former_approvers) like ${containing(key)} escape '\\'`);
  return any.length > 0 ? eb.or(any) : eb.val(false);
}

/** Whether the approval names the person (the rule of person.ts for logins). */
function rowNamesThem(row: TrackedApprovalRow, keys: PersonKeys): boolean {
  const former = row.former_approvers ? (JSON.parse(row.former_approvers) as Person[]) : [];
  return (
    [
      row.requester_login,
      row.requester_slack_id,
      row.approver_login,
      row.approver_slack_id,
      row.decided_by,
      row.escalated_to_login,
      row.escalated_to_slack_id,
    ].some((v) => isTheirs(keys, v)) ||
    former.some((p) => isTheirs(keys, p.login) || isTheirs(keys, p.chatId))
  );
}

async function approvalsNaming(db: Db, keys: PersonKeys): Promise<TrackedApprovalRow[]> {
  const rows = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where((eb) => namesThem(eb, keys))
    .orderBy('djbh')
    .execute();
  return rows.filter((r) => rowNamesThem(r, keys));
}

/** The approval with the person replaced by the pseudonym, and their own words (as requester) blanked. */
function erasedApproval(
  row: TrackedApprovalRow,
  keys: PersonKeys,
  pseudonym: string,
): Partial<TrackedApprovalRow> {
  const asked = isTheirs(keys, row.requester_login) || isTheirs(keys, row.requester_slack_id);
  const approver = isTheirs(keys, row.approver_login) || isTheirs(keys, row.approver_slack_id);
  const leader =
    isTheirs(keys, row.escalated_to_login) || isTheirs(keys, row.escalated_to_slack_id);
  const former = row.former_approvers ? (JSON.parse(row.former_approvers) as Person[]) : null;
  return {
    ...(asked
      ? { requester_login: pseudonym, requester_slack_id: pseudonym, title: '', note: '' }
      : {}),
    // A request asked in their DM: the DM's id names them to anyone who can ask Slack.
    ...(asked && isDirectConversation(row.channel_id) ? { channel_id: pseudonym } : {}),
    ...(asked && row.requested_again_channel && isDirectConversation(row.requested_again_channel)
      ? { requested_again_channel: pseudonym }
      : {}),
    ...(approver ? { approver_login: pseudonym, approver_slack_id: null } : {}),
    ...(isTheirs(keys, row.decided_by) ? { decided_by: pseudonym } : {}),
    ...(leader ? { escalated_to_login: pseudonym, escalated_to_slack_id: pseudonym } : {}),
    ...(former ? { former_approvers: JSON.stringify(withoutThem(former, keys, pseudonym)) } : {}),
  };
}

/** What went to their DM (or edited a message there): its lane named them, and its channel was the DM with them. */
async function eraseTheirLanes(
  trx: Db,
  djbh: string,
  lanes: readonly string[],
  pseudonym: string,
): Promise<void> {
  const erased = new Map<string, string[]>();
  for (const lane of lanes) {
    const to = erasedLane(lane, pseudonym);
    erased.set(to, [...(erased.get(to) ?? []), lane]);
  }
  for (const [to, from] of erased)
    await trx
      .updateTable('announcements')
      .set({ lane_key: to, sent_channel: null })
      .where('djbh', '=', djbh)
      .where('lane_key', 'in', from)
      .execute();
  await trx
    .updateTable('announcements')
    .set({ state: 'skipped', last_error: 'the person was erased' })
    .where('djbh', '=', djbh)
    .where('lane_key', 'in', [...erased.keys()])
    .where('state', 'in', ['pending', 'failed'])
    .execute();
}

function approvalsSection(db: Db): PersonalDataSection {
  return {
    name: 'approvals',
    find: async (keys) => approvalsNaming(db, keys),
    async erase(keys, pseudonym) {
      let changed = 0;
      for (const row of await approvalsNaming(db, keys)) {
        // Open: the service still needs its people, and the app follows it (personal-data.ts).
        if (row.tracking === 'active') continue;
        const lanes = lanesOf(keys);
        await db.transaction().execute(async (trx) => {
          await trx
            .updateTable('tracked_approvals')
            .set(erasedApproval(row, keys, pseudonym))
            .where('djbh', '=', row.djbh)
            .where('tracking', '!=', 'active')
            .execute();
          if (lanes.length === 0) return;
          await eraseTheirLanes(trx, row.djbh, lanes, pseudonym);
        });
        changed++;
      }
      return changed;
    },
  };
}

function announcementsSection(db: Db): PersonalDataSection {
  return {
    name: 'announcements to them',
    find: async (keys) =>
      db
        .selectFrom('announcements')
        .selectAll()
        .where('lane_key', 'in', lanesOf(keys))
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
    // Erased with their approvals (approvalsSection): what is left in their lanes belongs to open ones.
    erase: async () => 0,
  };
}

/** Links holding any of their Slack ids or logins. */
function linkOf(eb: ExpressionBuilder<Database, 'linked_accounts'>, keys: PersonKeys) {
  const { slackIds, logins } = keys;
  return eb.or([
    ...(slackIds.length > 0 ? [eb('slack_user_id', 'in', [...slackIds])] : []),
    ...(logins.length > 0 ? [loginIn('login', logins)] : []),
  ]);
}

function linksSection(db: Db): PersonalDataSection {
  return {
    name: 'account links',
    find: async (keys) =>
      db
        .selectFrom('linked_accounts')
        .selectAll()
        .where((eb) => linkOf(eb, keys))
        .execute(),
    async erase(keys) {
      const result = await db
        .deleteFrom('linked_accounts')
        .where((eb) => linkOf(eb, keys))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

const CONFIRMATION_PEOPLE = [
  'requester_slack_id',
  'started_by_slack_id',
  'approver_slack_id',
] as const;

/** Confirmations naming them in any role. */
function confirmationOf(
  eb: ExpressionBuilder<Database, 'step_confirmations'>,
  slackIds: readonly string[],
) {
  return eb.or(CONFIRMATION_PEOPLE.map((c) => eb(c, 'in', [...slackIds])));
}

function confirmationsSection(db: Db): PersonalDataSection {
  return {
    name: 'workflow confirmations',
    find: async ({ slackIds }) =>
      slackIds.length === 0
        ? []
        : db
            .selectFrom('step_confirmations')
            .selectAll()
            .where((eb) => confirmationOf(eb, slackIds))
            .execute(),
    async erase({ slackIds }) {
      if (slackIds.length === 0) return 0;
      const result = await db
        .deleteFrom('step_confirmations')
        .where((eb) => confirmationOf(eb, slackIds))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

const TEMPLATE_PEOPLE = ['approver_slack_id', 'created_by', 'updated_by', 'removed_by'] as const;

function templatesSection(db: Db): PersonalDataSection {
  return {
    name: 'templates naming them',
    find: async ({ slackIds }) =>
      slackIds.length === 0
        ? []
        : db
            .selectFrom('request_templates')
            .selectAll()
            .where((eb) => eb.or(TEMPLATE_PEOPLE.map((c) => eb(c, 'in', [...slackIds]))))
            .execute(),
    async erase({ slackIds }, pseudonym) {
      if (slackIds.length === 0) return 0;
      let changed = 0;
      for (const column of TEMPLATE_PEOPLE) {
        // The template keeps working: without a suggested approver, or credited to the pseudonym.
        const result = await db
          .updateTable('request_templates')
          .set({ [column]: column === 'approver_slack_id' ? null : pseudonym })
          .where(column, 'in', [...slackIds])
          .executeTakeFirst();
        changed += Number(result.numUpdatedRows);
      }
      return changed;
    },
  };
}

function templateChangesSection(db: Db): PersonalDataSection {
  return {
    name: 'template changes by them',
    find: async ({ slackIds }) =>
      slackIds.length === 0
        ? []
        : db
            .selectFrom('template_changes')
            .selectAll()
            .where('changed_by', 'in', [...slackIds])
            .orderBy('changed_at')
            .execute(),
    async erase({ slackIds }, pseudonym) {
      if (slackIds.length === 0) return 0;
      const result = await db
        .updateTable('template_changes')
        .set({ changed_by: pseudonym })
        .where('changed_by', 'in', [...slackIds])
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

/** A delegate while away, from them or to them: it only routes new requests, so it goes whole. */
function delegationsSection(db: Db): PersonalDataSection {
  return {
    name: 'delegations',
    find: async ({ logins }) =>
      logins.length === 0
        ? []
        : db
            .selectFrom('delegations')
            .selectAll()
            .where((eb) => eb.or([loginIn('from_login', logins), loginIn('to_login', logins)]))
            .orderBy('from_key')
            .execute(),
    async erase({ logins }) {
      if (logins.length === 0) return 0;
      const result = await db
        .deleteFrom('delegations')
        .where((eb) => eb.or([loginIn('from_login', logins), loginIn('to_login', logins)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** All the keys of the person: those given, those their link joins, and those an approval paired. */
async function resolve(db: Db, links: PersonalDataSection, first: PersonKeys): Promise<PersonKeys> {
  const slackIds = new Set(first.slackIds);
  const logins = new Map(first.logins.map((l) => [l.toLowerCase(), l]));
  for (const link of await links.find(first)) {
    const row = link as { slack_user_id: string; login: string };
    slackIds.add(row.slack_user_id);
    logins.set(row.login.toLowerCase(), row.login);
  }
  // An approval recorded both of a party's names as it started: one names the other.
  for (const row of await approvalsNaming(db, first)) {
    const pairs: Array<[string | null, string | null]> = [
      [row.requester_slack_id, row.requester_login],
      [row.approver_slack_id, row.approver_login],
      [row.escalated_to_slack_id, row.escalated_to_login],
    ];
    for (const [id, login] of pairs) {
      if (!id || !login || !(isTheirs(first, id) || isTheirs(first, login))) continue;
      slackIds.add(id);
      logins.set(login.toLowerCase(), login);
    }
  }
  return { slackIds: [...slackIds], logins: [...logins.values()] };
}

/** Their idle lane leases (no holder, or the lease ran out) go; those in use are only counted. */
async function eraseLanes(db: Db, dialect: DialectName, keys: PersonKeys) {
  const lanes = lanesOf(keys);
  if (lanes.length === 0) return { deleted: 0, busy: 0 };
  const idle = await db
    .deleteFrom('lane_leases')
    .where('lane', 'in', lanes)
    .where((eb) => eb.or([eb('token', 'is', null), eb('lease_until', '<', dbNowMs(dialect))]))
    .executeTakeFirst();
  const busy = await db
    .selectFrom('lane_leases')
    .select('lane')
    .where('lane', 'in', lanes)
    .execute();
  return { deleted: Number(idle.numDeletedRows), busy: busy.length };
}

/**
 * The PersonalData port over Kysely: one section per table that holds people. A table added later
 * brings its own section, exported and erased with the rest: the every-table scan of
 * test/operator/people.test.ts fails until it does.
 */
export function createPersonalDataStore(db: Db, dialect: DialectName): PersonalData {
  const links = linksSection(db);
  return {
    // Their link last: it is what says their Slack id and login are one person, so an erase
    // stopped half way, run again by either, still finds everything of theirs.
    sections: [
      approvalsSection(db),
      announcementsSection(db),
      confirmationsSection(db),
      templatesSection(db),
      templateChangesSection(db),
      delegationsSection(db),
      ...chainSections(db),
      links,
    ],
    resolve: (first) => resolve(db, links, first),
    // Open approvals, and requests in several steps still going on (their ids: step 1's number).
    openApprovals: async (keys) => [
      ...new Set([
        ...(await approvalsNaming(db, keys))
          .filter((r) => r.tracking === 'active')
          .map((r) => r.djbh),
        ...(await openChains(db, keys)),
      ]),
    ],
    eraseLanes: (keys) => eraseLanes(db, dialect, keys),
  };
}
