import { type Kysely, sql } from 'kysely';
import { type MigrationProvider, Migrator } from 'kysely/migration';
import {
  buildIndex,
  dropIndex,
  inApprovalBatches,
  isPostgres,
  runPendingMigrations,
  type StagedMigration,
} from './migration-runner.ts';

// Versioned migrations, applied in name order at start (migration-runner.ts: each in its own short
// transaction, heavy work outside it). Never rename one that has shipped, nor change the schema it
// leaves (a database that ran it never runs it again): add another. How it gets there may change,
// as 015, 020 and 022 did to stop locking out the release serving meanwhile.
// Types are portable between SQLite and Postgres (text, integer, bigint).

const migrations: Record<string, StagedMigration> = {
  '2026-11-21-001-tracked-approvals': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tracked_approvals')
        .addColumn('djbh', 'text', (c) => c.primaryKey())
        .addColumn('team_id', 'text', (c) => c.notNull())
        .addColumn('channel_id', 'text', (c) => c.notNull())
        .addColumn('message_ts', 'text')
        .addColumn('requester_slack_id', 'text', (c) => c.notNull())
        .addColumn('requester_login', 'text', (c) => c.notNull())
        .addColumn('approver_login', 'text', (c) => c.notNull())
        .addColumn('approver_slack_id', 'text')
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull())
        .addColumn('decision', 'text', (c) => c.notNull())
        .addColumn('decided_by', 'text')
        .addColumn('tracking', 'text', (c) => c.notNull())
        .addColumn('locale', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('last_checked_at', 'bigint')
        .addColumn('next_check_at', 'bigint', (c) => c.notNull())
        .addColumn('check_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('lease_until', 'bigint')
        .execute();
      await db.schema
        .createIndex('tracked_approvals_due')
        .on('tracked_approvals')
        .columns(['tracking', 'next_check_at'])
        .execute();
      await db.schema
        .createIndex('tracked_approvals_requester')
        .on('tracked_approvals')
        .columns(['requester_login', 'created_at'])
        .execute();
      await db.schema
        .createIndex('tracked_approvals_approver')
        .on('tracked_approvals')
        .columns(['approver_login', 'created_at'])
        .execute();
      await db.schema
        .createTable('announcements')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('djbh', 'text', (c) => c.notNull().references('tracked_approvals.djbh'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('decision', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('attempted_at', 'bigint')
        .addColumn('lease_until', 'bigint')
        .addColumn('sent_ts', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('announcements_pending')
        .on('announcements')
        .columns(['state', 'created_at'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('announcements').execute();
      await db.schema.dropTable('tracked_approvals').execute();
    },
  },
  '2026-11-22-002-links-and-reminders': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('linked_accounts')
        .addColumn('slack_user_id', 'text', (c) => c.primaryKey())
        .addColumn('team_id', 'text', (c) => c.notNull())
        .addColumn('login', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('linked_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('linked_accounts_login')
        .on('linked_accounts')
        .column('login')
        .execute();
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('reminders_sent', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('last_reminded_at', 'bigint')
        .execute();
      // Which occurrence an announcement is, for the kinds that happen more than once (reminders).
      await db.schema.alterTable('announcements').addColumn('occurrence', 'integer').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('announcements').dropColumn('occurrence').execute();
      await db.schema.alterTable('tracked_approvals').dropColumn('last_reminded_at').execute();
      await db.schema.alterTable('tracked_approvals').dropColumn('reminders_sent').execute();
      await db.schema.dropTable('linked_accounts').execute();
    },
  },
  '2026-11-22-003-delivery-under-faults': {
    async up(db: Kysely<unknown>) {
      // When the next attempt may start (backoff, Retry-After); 0 means at once.
      await addColumn(db, 'announcements', 'next_attempt_at bigint not null default 0');
      // The current attempt's fence: only it may record the outcome.
      await addColumn(db, 'announcements', 'attempt_token text');
      // 1 when an earlier attempt may have posted without recording it.
      await addColumn(db, 'announcements', 'uncertain integer not null default 0');
      // Where it was posted, so that it can be edited later (the approver's DM).
      await addColumn(db, 'announcements', 'sent_channel text');
      // The few pending ones only (announcements_pending finds them).
      await db
        .updateTable('announcements' as never)
        .set({ uncertain: 1 } as never)
        .where(sql<boolean>`attempted_at is not null and state = 'pending'`)
        .execute();
      await addColumn(db, 'tracked_approvals', 'unknown_since bigint');
    },
    async outside(db: Kysely<unknown>) {
      await buildIndex(db, 'announcements_due', 'announcements (state, next_attempt_at)');
      await buildIndex(db, 'announcements_approval', 'announcements (djbh, kind)');
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('tracked_approvals').dropColumn('unknown_since').execute();
      await db.schema.dropIndex('announcements_approval').execute();
      await db.schema.dropIndex('announcements_due').execute();
      for (const column of ['sent_channel', 'uncertain', 'attempt_token', 'next_attempt_at'])
        await db.schema.alterTable('announcements').dropColumn(column).execute();
    },
  },
  '2026-11-22-004-submission-keys': {
    async up(db: Kysely<unknown>) {
      // Which form submissions were taken: a replay reaching any replica starts nothing.
      await db.schema
        .createTable('submission_keys')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('taken_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('submission_keys').execute();
    },
  },
  '2026-11-22-005-entry-points': {
    async up(db: Kysely<unknown>) {
      // A request started from a message shortcut goes into that message's thread.
      await db.schema.alterTable('tracked_approvals').addColumn('thread_ts', 'text').execute();
      // A request started by a Workflow Builder step completes that step once it ends.
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('function_execution_id', 'text')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const column of ['function_execution_id', 'thread_ts'])
        await db.schema.alterTable('tracked_approvals').dropColumn(column).execute();
    },
  },
  '2026-11-23-006-step-confirmations': {
    async up(db: Kysely<unknown>) {
      // A workflow step run by someone other than its requester waits here for the requester's
      // Start or Decline; kept in the database so that it survives restarts and is answered once
      // across replicas.
      await db.schema
        .createTable('step_confirmations')
        .addColumn('execution_id', 'text', (c) => c.primaryKey())
        .addColumn('team_id', 'text', (c) => c.notNull())
        .addColumn('requester_slack_id', 'text', (c) => c.notNull())
        .addColumn('started_by_slack_id', 'text')
        .addColumn('approver_slack_id', 'text')
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull())
        .addColumn('channel_id', 'text')
        .addColumn('locale', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('asked_channel', 'text')
        .addColumn('asked_ts', 'text')
        .addColumn('step_closed', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('step_confirmations_due')
        .on('step_confirmations')
        .columns(['state', 'expires_at'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('step_confirmations').execute();
    },
  },
  '2026-11-23-007-job-runs': {
    async up(db: Kysely<unknown>) {
      // Jobs that one replica runs per period (the retention purge): when each may run next, and
      // which run holds it now (a lease, so a run that dies is taken over at the next tick).
      await db.schema
        .createTable('job_runs')
        .ifNotExists()
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('next_run_at', 'bigint', (c) => c.notNull())
        .addColumn('lease_until', 'bigint')
        .execute();
    },
    // The purge finds ended approvals oldest first, and asks of each whether anything of it is
    // still pending or failed; the metrics count the outbox by state and kind at every scrape.
    async outside(db: Kysely<unknown>) {
      await buildIndex(db, 'tracked_approvals_ended', 'tracked_approvals (tracking, updated_at)');
      await buildIndex(db, 'announcements_approval_state', 'announcements (djbh, state)');
      await buildIndex(db, 'announcements_state_kind', 'announcements (state, kind)');
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('announcements_state_kind').execute();
      await db.schema.dropIndex('announcements_approval_state').execute();
      await db.schema.dropIndex('tracked_approvals_ended').execute();
      await db.schema.dropTable('job_runs').execute();
    },
  },
  '2026-11-23-008-confirmation-answered-at': {
    async up(db: Kysely<unknown>) {
      // When a confirmation's Start was taken: a row still `starting` long after it was left by a
      // crash, and the sweep settles it (started if the approval exists, else failed).
      await db.schema.alterTable('step_confirmations').addColumn('answered_at', 'bigint').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('step_confirmations').dropColumn('answered_at').execute();
    },
  },
  '2026-11-23-009-request-again': {
    async up(db: Kysely<unknown>) {
      // The approval a request was made again from ("Request again"), linked from its message.
      // Expand-only: a nullable column the previous release neither reads nor writes.
      await db.schema.alterTable('tracked_approvals').addColumn('again_of', 'text').execute();
      await db.schema.alterTable('tracked_approvals').addColumn('again_of_link', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('tracked_approvals').dropColumn('again_of_link').execute();
      await db.schema.alterTable('tracked_approvals').dropColumn('again_of').execute();
    },
  },
  '2026-11-23-010-fleet-delivery': {
    // Expand only: every column is nullable or defaulted and nothing is renamed, so the previous
    // release still runs against this schema (it ignores what it does not know).
    async up(db: Kysely<unknown>) {
      // When the first attempt started, kept through re-drives: the search for an earlier post
      // starts there, not at the last reset (filled in for what was attempted before, outside).
      await addColumn(db, 'announcements', 'first_attempted_at bigint');
      // When an operator re-drove it: its retry window starts again there, while its place in
      // the recorded order (created_at) stays, so a re-drive never reorders a lane.
      await addColumn(db, 'announcements', 'redriven_at bigint');
      // The claim of the pass checking an approval: only that pass may record what it found.
      await addColumn(db, 'tracked_approvals', 'check_token text');
      // Slack said the approver cannot be reached: the requester was told, no more reminders.
      await addColumn(db, 'tracked_approvals', 'approver_unreachable_since bigint');
      // Fleet-wide delivery state, one row per concern: `paused_at` set while Slack refuses the
      // app's token (every replica stops posting until it works again).
      await db.schema
        .createTable('delivery_state')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('paused_at', 'bigint')
        .addColumn('paused_reason', 'text')
        .execute();
      // One replica at a time serves a lane (a channel, a thread's fallback, a DM), fenced by a
      // token like an announcement's lease; `next_post_at` paces the lane for the whole fleet.
      // Both on the database's clock.
      await db.schema
        .createTable('lane_leases')
        .ifNotExists()
        .addColumn('lane', 'text', (c) => c.primaryKey())
        .addColumn('token', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('next_post_at', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    },
    // Nearly every announcement was attempted: filled in by batches of approvals.
    async outside(db: Kysely<unknown>) {
      await inApprovalBatches(db, BACKFILL_BATCH, async (trx, after, upTo) => {
        await sql`update announcements set first_attempted_at = attempted_at
          where djbh > ${after} and djbh <= ${upTo}
            and attempted_at is not null and first_attempted_at is null`.execute(trx);
      });
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('lane_leases').execute();
      await db.schema.dropTable('delivery_state').execute();
      await db.schema
        .alterTable('tracked_approvals')
        .dropColumn('approver_unreachable_since')
        .execute();
      await db.schema.alterTable('tracked_approvals').dropColumn('check_token').execute();
      await db.schema.alterTable('announcements').dropColumn('redriven_at').execute();
      await db.schema.alterTable('announcements').dropColumn('first_attempted_at').execute();
    },
  },
  '2026-11-25-011-escalation': {
    async up(db) {
      // Set once, by the conditional update that records the escalation with its announcements:
      // it is what makes an escalation happen at most once, whoever records it. The person it
      // went to is null when nobody above the approver could be told (no escalation is posted).
      // Columns only: a release without escalation runs on as before, and never delivers the
      // new kinds (its outbox query takes only the kinds it knows).
      await db.schema.alterTable('tracked_approvals').addColumn('escalated_at', 'bigint').execute();
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('escalated_to_login', 'text')
        .execute();
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('escalated_to_slack_id', 'text')
        .execute();
    },
    async down(db) {
      for (const column of ['escalated_to_slack_id', 'escalated_to_login', 'escalated_at'])
        await db.schema.alterTable('tracked_approvals').dropColumn(column).execute();
    },
  },
  '2026-11-25-012-templates': {
    // Expand only: two new tables and a nullable column the previous release ignores.
    async up(db: Kysely<unknown>) {
      // A channel's request templates. A removed one stays (removed_at/removed_by) so requests
      // made from it keep naming it; the live ones of a channel have unique names (name_key is
      // the name in lower case), which a partial index holds across replicas.
      await db.schema
        .createTable('request_templates')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('channel_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('name_key', 'text', (c) => c.notNull())
        .addColumn('title_prefix', 'text', (c) => c.notNull())
        .addColumn('note_skeleton', 'text', (c) => c.notNull())
        .addColumn('approver_slack_id', 'text')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_by', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('removed_by', 'text')
        .addColumn('removed_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('request_templates_live_name')
        .on('request_templates')
        .columns(['channel_id', 'name_key'])
        .unique()
        .where(sql.ref('removed_at'), 'is', null)
        .execute();
      // Who changed what: one row per add, edit and removal, shown in the templates modal.
      await db.schema
        .createTable('template_changes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('template_id', 'text', (c) => c.notNull())
        .addColumn('channel_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('changed_by', 'text', (c) => c.notNull())
        .addColumn('changed_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('template_changes_channel')
        .on('template_changes')
        .columns(['channel_id', 'changed_at'])
        .execute();
      // The template a request was made from, named on its message whenever it is re-rendered.
      await db.schema.alterTable('tracked_approvals').addColumn('template_name', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('tracked_approvals').dropColumn('template_name').execute();
      await db.schema.dropTable('template_changes').execute();
      await db.schema.dropTable('request_templates').execute();
    },
  },
  '2026-11-25-013-paused-time': {
    // Expand only: a nullable and a defaulted column the previous release ignores.
    async up(db: Kysely<unknown>) {
      // When the fleet-wide pause began on the database's clock: how long it lasted is measured
      // there, whichever replicas set and lifted it.
      await db.schema.alterTable('delivery_state').addColumn('paused_at_db', 'bigint').execute();
      // How long the announcement's retry window stood still while delivery was paused.
      await db.schema
        .alterTable('announcements')
        .addColumn('paused_ms', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('announcements').dropColumn('paused_ms').execute();
      await db.schema.alterTable('delivery_state').dropColumn('paused_at_db').execute();
    },
  },
  '2026-11-25-014-commit-horizon': {
    // Expand only: a nullable column the previous release ignores.
    async up(db: Kysely<unknown>) {
      // Until when (database clock) Slack may still commit a post of an earlier attempt whose
      // outcome is unknown: no post again before a search after it has found nothing.
      await db.schema
        .alterTable('announcements')
        .addColumn('commit_horizon_at', 'bigint')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('announcements').dropColumn('commit_horizon_at').execute();
    },
  },
  '2026-11-25-015-logins-any-case': {
    // Logins compare case-insensitively (approvals/person.ts): the lookups by login compare
    // lower(column) = lower(?), so these indexes serve them. Expand only: the previous release
    // keeps its exact lookups on the indexes it had. Built concurrently on Postgres, so the
    // previous release keeps writing meanwhile (migration-runner.ts).
    async up() {},
    async outside(db: Kysely<unknown>) {
      for (const [name, definition] of LOWER_LOGIN_INDEXES) await buildIndex(db, name, definition);
    },
    async down(db: Kysely<unknown>) {
      for (const [name] of [...LOWER_LOGIN_INDEXES].reverse())
        await db.schema.dropIndex(name).execute();
    },
  },
  '2026-11-25-016-confirmation-digest': {
    // Expand only: a nullable column the previous release ignores (its questions have none).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('step_confirmations').addColumn('shown_digest', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('step_confirmations').dropColumn('shown_digest').execute();
    },
  },
  '2026-11-25-017-approval-template-id': {
    // Expand only: a nullable column the previous release ignores. Request again reopens the form
    // with the template that started the approval, found by id (a name may have been reused).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tracked_approvals').addColumn('template_id', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('tracked_approvals').dropColumn('template_id').execute();
    },
  },
  '2026-11-25-018-requested-again-as': {
    // Expand only: nullable columns the previous release ignores (it keeps offering the button).
    async up(db: Kysely<unknown>) {
      for (const column of ['requested_again_as', 'requested_again_channel', 'requested_again_ts'])
        await db.schema.alterTable('tracked_approvals').addColumn(column, 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      for (const column of ['requested_again_as', 'requested_again_channel', 'requested_again_ts'])
        await db.schema.alterTable('tracked_approvals').dropColumn(column).execute();
    },
  },
  '2026-11-25-019-conversation-lanes': {
    // The lane (the conversation an announcement goes to, approvals/conversation.ts), computed
    // when it is recorded. Nullable: a replica of the previous release still records rows without
    // it during a rolling deploy, and this release fills those in before it reads lanes.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('announcements').addColumn('lane_key', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('announcements').dropColumn('lane_key').execute();
    },
  },
  '2026-11-25-020-recorded-order': {
    // An approval's announcements are ordered as the database recorded them, never by a caller's
    // clock (a poll pass reads `now` once, when it starts; replicas' clocks disagree). The
    // database numbers each one as it inserts it, in a trigger (so a replica of the previous
    // release gets its rows numbered too), from a counter on the approval's row: the update
    // locks that row until commit on Postgres, so one approval's numbers follow commit order (a
    // sequence's would not: a transaction may draw a number and commit after one that drew a
    // later one), and approvals do not wait for each other; SQLite has one writer at a time.
    //
    // The schema changes (columns, trigger) take a moment; the numbering of what is there already
    // runs after them, a batch of approvals at a time, and the index is built concurrently, so the
    // previous release keeps recording and delivering throughout (what it records meanwhile is
    // numbered by the trigger, after what was there).
    async up(db: Kysely<unknown>) {
      if (isPostgres(db)) {
        // Safe to run again after a failure part-way (the runner records the migration last).
        await sql`alter table announcements add column if not exists seq bigint`.execute(db);
        await sql`alter table tracked_approvals
          add column if not exists announcements_recorded bigint not null default 0`.execute(db);
        await sql`create or replace function announcement_seq() returns trigger language plpgsql as $$
          begin
            update tracked_approvals set announcements_recorded = announcements_recorded + 1
              where djbh = new.djbh returning announcements_recorded into new.seq;
            return new;
          end $$`.execute(db);
        await sql`drop trigger if exists announcement_seq on announcements`.execute(db);
        await sql`create trigger announcement_seq before insert on announcements
          for each row execute function announcement_seq()`.execute(db);
      } else {
        await db.schema.alterTable('announcements').addColumn('seq', 'bigint').execute();
        await db.schema
          .alterTable('tracked_approvals')
          .addColumn('announcements_recorded', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
        await sql`create trigger announcement_seq after insert on announcements begin
            update tracked_approvals set announcements_recorded = announcements_recorded + 1
              where djbh = new.djbh;
            update announcements set seq = (
                select announcements_recorded from tracked_approvals where djbh = new.djbh)
              where rowid = new.rowid;
          end`.execute(db);
      }
    },
    async outside(db: Kysely<unknown>) {
      await inApprovalBatches(db, BACKFILL_BATCH, numberRecordedAnnouncements);
      await buildIndex(db, 'announcements_approval_order', 'announcements (djbh, seq)');
    },
    async down(db: Kysely<unknown>) {
      await sql`drop trigger if exists announcement_seq ${sql.raw(isPostgres(db) ? 'on announcements' : '')}`.execute(
        db,
      );
      if (isPostgres(db)) await sql`drop function if exists announcement_seq()`.execute(db);
      await db.schema.dropIndex('announcements_approval_order').execute();
      await db.schema
        .alterTable('tracked_approvals')
        .dropColumn('announcements_recorded')
        .execute();
      await db.schema.alterTable('announcements').dropColumn('seq').execute();
    },
  },
  '2026-11-25-021-approver-handover': {
    // The service may give an approval to someone else (approvals/handover.ts): the current
    // approver replaces the recorded one, numbered by term (0: the one it was requested from),
    // with those before who were sent their DM kept: they read its title there, and may still see
    // it. Expand only: the previous release ignores these columns, and during a rolling deploy it
    // reads the approver a new replica recorded, but neither its term nor the `handed-over` kind
    // (its delivery of that note fails, and a new replica sends it once the lease runs out).
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('approver_term', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // Of its announcements, those numbered above this (announcements.seq) are the current
      // approver's: what reminders count, and whose digest they join.
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('approver_from_seq', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('approver_since', 'bigint')
        .execute();
      // Who had it before (JSON: [{ login, chatId }], oldest first): they were sent its title.
      await db.schema
        .alterTable('tracked_approvals')
        .addColumn('former_approvers', 'text')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      for (const column of [
        'approver_term',
        'approver_from_seq',
        'approver_since',
        'former_approvers',
      ])
        await db.schema.alterTable('tracked_approvals').dropColumn(column).execute();
    },
  },
  '2026-11-25-022-unused-indexes': {
    // Contract: indexes no query of this release or the previous one uses, each one more entry
    // to write with every new approval and every announcement sent (a state change moves the row).
    // The exact-case login indexes were kept by 015 for the release before it; every lookup now
    // goes through lower(login) (login-match.ts). An approval's few announcements are all found
    // through (djbh, seq); the (djbh, kind) and (djbh, state) indexes only narrowed a handful of
    // rows further. A rollback to the previous release runs on this unchanged.
    // Dropped concurrently on Postgres: a plain drop waits for, and then blocks, every query of
    // the table.
    async up() {},
    async outside(db: Kysely<unknown>) {
      for (const index of UNUSED_INDEXES) await dropIndex(db, index.name);
    },
    async down(db: Kysely<unknown>) {
      for (const { name, table, columns } of UNUSED_INDEXES)
        await db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
    },
  },
  '2026-11-27-027-hot-checks': {
    // Until when an approval is checked every few seconds: its approver followed a link from
    // Slack to the service and is likely deciding now (check-schedule.ts). Expand only: the
    // previous release ignores it and checks on its own schedule; a mark it misses only waits.
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('tracked_approvals').addColumn('hot_until', 'bigint').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('tracked_approvals').dropColumn('hot_until').execute();
    },
  },
  '2026-11-28-028-delegations': {
    // Delegates while away (approvals/delegation.ts): one row per person who is away, keyed by
    // their login as person.ts compares it (from_key), so one person has one delegation however
    // their login was spelled. Expand only: a new table the previous release never reads.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('delegations')
        .addColumn('from_key', 'text', (c) => c.primaryKey())
        .addColumn('from_login', 'text', (c) => c.notNull())
        .addColumn('to_login', 'text', (c) => c.notNull())
        .addColumn('until', 'bigint', (c) => c.notNull())
        .addColumn('set_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('delegations').execute();
    },
  },
  '2026-11-28-029-approval-steps': {
    // Approvals in several steps (approvals/steps.ts): a chain, keyed by its first step's number,
    // and one row per step, each started step linked to its tracked approval by number. A
    // template's later steps are a column of its own. Expand only: new tables and a nullable
    // column the previous release never reads (its templates start one step, as before).
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('approval_chains')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('requester_login', 'text', (c) => c.notNull())
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('note', 'text', (c) => c.notNull())
        .addColumn('locale', 'text', (c) => c.notNull())
        .addColumn('steps', 'integer', (c) => c.notNull())
        .addColumn('outcome', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('ended_at', 'bigint')
        .execute();
      await db.schema
        .createTable('approval_chain_steps')
        .addColumn('chain_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('rule', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('approver_login', 'text')
        .addColumn('djbh', 'text')
        .addColumn('decision', 'text')
        .addColumn('decided_by', 'text')
        .addColumn('skip_reason', 'text')
        .addColumn('claim', 'text')
        .addColumn('lease_until', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('approval_chain_steps_pk', ['chain_id', 'position'])
        .execute();
      // The lifecycle asks, for each decision, whether its approval is a step of a chain.
      await db.schema
        .createIndex('approval_chain_steps_djbh')
        .on('approval_chain_steps')
        .column('djbh')
        .unique()
        .execute();
      await db.schema
        .createIndex('approval_chain_steps_state')
        .on('approval_chain_steps')
        .column('state')
        .execute();
      await db.schema.alterTable('request_templates').addColumn('later_steps', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('request_templates').dropColumn('later_steps').execute();
      await db.schema.dropTable('approval_chain_steps').execute();
      await db.schema.dropTable('approval_chains').execute();
    },
  },
  '2026-11-28-030-workflow-later-steps': {
    // A Workflow Builder step's later steps (its `later_steps` input, approvals/workflow-steps.ts),
    // kept with the question its requester confirms, so Start starts the request as a chain.
    // Expand only: a nullable column the previous release never reads (its steps start one step).
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('step_confirmations').addColumn('later_steps', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('step_confirmations').dropColumn('later_steps').execute();
    },
  },
};

/** Dropped by 022, as the migrations before it had made them. */
const UNUSED_INDEXES = [
  {
    name: 'tracked_approvals_approver',
    table: 'tracked_approvals',
    columns: ['approver_login', 'created_at'],
  },
  {
    name: 'tracked_approvals_requester',
    table: 'tracked_approvals',
    columns: ['requester_login', 'created_at'],
  },
  { name: 'linked_accounts_login', table: 'linked_accounts', columns: ['login'] },
  { name: 'announcements_approval', table: 'announcements', columns: ['djbh', 'kind'] },
  { name: 'announcements_approval_state', table: 'announcements', columns: ['djbh', 'state'] },
];

/** Built by 015: the lookups by login, in any case. */
const LOWER_LOGIN_INDEXES: Array<[string, string]> = [
  ['tracked_approvals_approver_lower', 'tracked_approvals (lower(approver_login), created_at)'],
  ['tracked_approvals_requester_lower', 'tracked_approvals (lower(requester_login), created_at)'],
  ['linked_accounts_login_lower', 'linked_accounts (lower(login))'],
  // What waits for a leader includes what was escalated to them (approval-repository.ts).
  [
    'tracked_approvals_escalated_lower',
    'tracked_approvals (lower(escalated_to_login), created_at)',
  ],
];

/**
 * Approvals whose announcements (some 4 each) a backfill changes per transaction: a request of the
 * previous release that needs one of their rows waits for at most one batch, some tens of
 * milliseconds.
 */
const BACKFILL_BATCH = 250;

/**
 * Adds a column, given as SQL (`name type constraints`); on Postgres only if it is not there yet,
 * since a migration that also works outside its transaction runs its `up` again after a failure.
 */
async function addColumn(db: Kysely<unknown>, table: string, definition: string) {
  await sql`alter table ${sql.id(table)} add column ${sql.raw(isPostgres(db) ? 'if not exists ' : '')}${sql.raw(definition)}`.execute(
    db,
  );
}

/**
 * 020's numbering of the approvals in `(after, upTo]` (their rows locked by the caller) that still
 * have unnumbered announcements: those recorded before 020, in the order they had (when recorded,
 * then id), then any the trigger numbered since, in theirs; the approval's counter goes on from
 * the last. Approvals whose announcements are all numbered are left alone, so it can run again.
 */
async function numberRecordedAnnouncements(db: Kysely<unknown>, after: string, upTo: string) {
  const unnumbered = sql`select djbh from announcements
    where djbh > ${after} and djbh <= ${upTo} and seq is null`;
  await sql`update announcements set seq = ranked.n
    from (select id, row_number() over (partition by djbh
            order by case when seq is null then 0 else 1 end, seq, created_at, id) as n
          from announcements where djbh in (${unnumbered})) ranked
    where ranked.id = announcements.id`.execute(db);
  await sql`update tracked_approvals set announcements_recorded = coalesce(
      (select max(seq) from announcements a where a.djbh = tracked_approvals.djbh), 0)
    where djbh > ${after} and djbh <= ${upTo}
      and announcements_recorded < coalesce(
        (select max(seq) from announcements a where a.djbh = tracked_approvals.djbh), 0)`.execute(
    db,
  );
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** What migrating found: the migrations this release ran now, and any it does not know. */
export interface MigrationReport {
  applied: string[];
  /**
   * Migrations a newer release ran that this one does not know: a rollback. Migrations only
   * ever expand the schema (docs/deploying.md, "Upgrades and rollbacks"), so this release runs on it as is.
   */
  ahead: string[];
}

/**
 * Brings the schema up to date; throws with the failing migration's name. A database a newer
 * release already migrated further is left as it is (see MigrationReport.ahead), as long as it has
 * every migration this release knows.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<MigrationReport> {
  const known = Object.keys(migrations).sort();
  const done = await appliedMigrations(db);
  const ahead = done.filter((name) => !known.includes(name));
  const missing = known.filter((name) => !done.includes(name));
  if (ahead.length > 0) {
    if (missing.length > 0)
      throw new Error(
        `Database migrations ${missing.join(', ')} are missing, but a newer release ran ${ahead.join(', ')}: run the newer release once (it migrates), then this one`,
      );
    return { applied: [], ahead };
  }
  // Up to date, as at every start but the first of a release: the Migrator's own checks (its
  // tables, its lock, a transaction) would find nothing to do, and cost a restart some 25 ms.
  if (missing.length === 0) return { applied: [], ahead: [] };
  // Each in its own short transaction, never all in one (migration-runner.ts).
  return { applied: await runPendingMigrations(db, migrations), ahead: [] };
}

/**
 * Undoes this release's last migration, as a test of it does to put a database back where the
 * previous release left it; never run by the app.
 */
export async function migrateDownOnce(db: Kysely<unknown>): Promise<void> {
  const { error } = await new Migrator({ db, provider }).migrateDown();
  if (error) throw error;
}

/** The migrations this database has run, by name; none for a database never migrated. */
export async function appliedMigrations(db: Kysely<unknown>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === 'kysely_migration')) return [];
  const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return rows.rows.map((r) => r.name);
}
