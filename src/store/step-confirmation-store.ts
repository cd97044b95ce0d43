import type { Kysely } from 'kysely';
import {
  type ConfirmationState,
  ENDED_WITHOUT_APPROVAL,
  type StepConfirmation,
  type StepConfirmations,
} from '../approvals/step-confirmation.ts';
import type { StepRule } from '../approvals/steps.ts';
import type { Database, StepConfirmationRow } from './schema.ts';

/**
 * StepConfirmations over Kysely. Every change of state is one conditional UPDATE, so two replicas
 * (or two clicks) answering the same confirmation cannot both move it.
 */
export function createStepConfirmationStore(db: Kysely<Database>): StepConfirmations {
  return {
    async create(c) {
      await db
        .insertInto('step_confirmations')
        .values({
          execution_id: c.executionId,
          team_id: c.teamId,
          requester_slack_id: c.requesterChatId,
          started_by_slack_id: c.startedByChatId,
          approver_slack_id: c.approverChatId,
          title: c.title,
          note: c.note,
          channel_id: c.channelId,
          locale: c.locale,
          state: 'pending',
          reason: null,
          created_at: c.createdAt.getTime(),
          expires_at: c.expiresAt.getTime(),
          asked_channel: null,
          asked_ts: null,
          step_closed: 0,
          answered_at: null,
          shown_digest: c.shownDigest,
          later_steps: c.laterSteps?.length ? JSON.stringify(c.laterSteps) : null,
        })
        .execute();
    },

    async get(executionId) {
      const row = await db
        .selectFrom('step_confirmations')
        .selectAll()
        .where('execution_id', '=', executionId)
        .executeTakeFirst();
      return row ? toConfirmation(row) : undefined;
    },

    async recordAsked(executionId, askedIn) {
      await db
        .updateTable('step_confirmations')
        .set({ asked_channel: askedIn.channel, asked_ts: askedIn.ts })
        .where('execution_id', '=', executionId)
        .execute();
    },

    async answer(executionId, to, now, reason) {
      const result = await db
        .updateTable('step_confirmations')
        .set({ state: to, reason: reason ?? null, answered_at: now.getTime() })
        .where('execution_id', '=', executionId)
        .where('state', '=', 'pending')
        .where('expires_at', '>', now.getTime())
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async defer(executionId) {
      await db
        .updateTable('step_confirmations')
        .set({ state: 'confirmed' })
        .where('execution_id', '=', executionId)
        .where('state', '=', 'starting')
        .execute();
    },

    async claimConfirmed(now, limit) {
      const rows = await db
        .selectFrom('step_confirmations')
        .selectAll()
        .where('state', '=', 'confirmed')
        .orderBy('created_at')
        .limit(limit)
        .execute();
      const claimed: StepConfirmation[] = [];
      for (const row of rows) {
        // answered_at restarts the time a Start may take before the sweep calls it interrupted.
        const result = await db
          .updateTable('step_confirmations')
          .set({ state: 'starting', answered_at: now.getTime() })
          .where('execution_id', '=', row.execution_id)
          .where('state', '=', 'confirmed')
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1)
          claimed.push({ ...toConfirmation(row), state: 'starting' });
      }
      return claimed;
    },

    async settle(executionId, to, reason) {
      await db
        .updateTable('step_confirmations')
        .set({ state: to, reason: reason ?? null })
        .where('execution_id', '=', executionId)
        .where('state', '=', 'starting')
        .execute();
    },

    async expire(now, reason) {
      const due = await db
        .selectFrom('step_confirmations')
        .selectAll()
        .where('state', '=', 'pending')
        .where('expires_at', '<=', now.getTime())
        .execute();
      const expired: StepConfirmation[] = [];
      for (const row of due) {
        const confirmation = toConfirmation(row);
        const text = reason(confirmation);
        // Only one replica expires each; a Start pressed meanwhile wins.
        const result = await db
          .updateTable('step_confirmations')
          .set({ state: 'expired', reason: text })
          .where('execution_id', '=', row.execution_id)
          .where('state', '=', 'pending')
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1)
          expired.push({ ...confirmation, state: 'expired', reason: text });
      }
      return expired;
    },

    async recoverStarting(before, reason) {
      // A row without answered_at was answered by a replica of the previous release (during a
      // rolling deploy), which may still be starting it: it counts as stuck only once its whole
      // time to answer is over as well.
      const stuck = await db
        .selectFrom('step_confirmations')
        .selectAll()
        .where('state', '=', 'starting')
        .where((eb) =>
          eb.or([
            eb('answered_at', '<=', before.getTime()),
            eb.and([eb('answered_at', 'is', null), eb('expires_at', '<=', before.getTime())]),
          ]),
        )
        .execute();
      const recovered = { started: [] as StepConfirmation[], failed: [] as StepConfirmation[] };
      for (const row of stuck) {
        const confirmation = toConfirmation(row);
        const approval = await db
          .selectFrom('tracked_approvals')
          .select('djbh')
          .where('function_execution_id', '=', row.execution_id)
          .executeTakeFirst();
        const to = approval ? 'started' : 'failed';
        const text = approval ? null : reason(confirmation);
        // Only one replica settles each; a Start that finished meanwhile wins.
        const result = await db
          .updateTable('step_confirmations')
          .set({ state: to, reason: text })
          .where('execution_id', '=', row.execution_id)
          .where('state', '=', 'starting')
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) === 1)
          recovered[to].push({ ...confirmation, state: to, reason: text });
      }
      return recovered;
    },

    async unclosed(limit) {
      const rows = await db
        .selectFrom('step_confirmations')
        .selectAll()
        .where('state', 'in', [...ENDED_WITHOUT_APPROVAL])
        .where('step_closed', '=', 0)
        .orderBy('created_at')
        .limit(limit)
        .execute();
      return rows.map(toConfirmation);
    },

    async markClosed(executionId) {
      await db
        .updateTable('step_confirmations')
        .set({ step_closed: 1 })
        .where('execution_id', '=', executionId)
        .execute();
    },
  };
}

function toConfirmation(row: StepConfirmationRow): StepConfirmation {
  return {
    executionId: row.execution_id,
    teamId: row.team_id,
    requesterChatId: row.requester_slack_id,
    startedByChatId: row.started_by_slack_id,
    approverChatId: row.approver_slack_id,
    title: row.title,
    note: row.note,
    shownDigest: row.shown_digest ?? null,
    channelId: row.channel_id,
    locale: row.locale,
    state: row.state as ConfirmationState,
    reason: row.reason,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    askedIn:
      row.asked_channel && row.asked_ts ? { channel: row.asked_channel, ts: row.asked_ts } : null,
    stepClosed: row.step_closed === 1,
    ...(row.later_steps ? { laterSteps: JSON.parse(row.later_steps) as StepRule[] } : {}),
  };
}
