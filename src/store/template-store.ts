import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import {
  nameKey,
  type RequestTemplate,
  TEMPLATE_LIMITS,
  type TemplateChange,
  type TemplateDraft,
  type TemplateStore,
  type TemplateWrite,
} from '../approvals/request-templates.ts';
import type { StepRule } from '../approvals/steps.ts';
import type { DialectName } from './database.ts';
import type { Database, RequestTemplateRow, TemplateChangeRow } from './schema.ts';

type Db = Kysely<Database>;

/**
 * The TemplateStore over Kysely. Each write and its change record are one transaction; the count
 * and name checks happen inside it, under a per-channel lock on Postgres (SQLite has one writer),
 * so two replicas adding at once cannot pass the limit. The partial unique index on live names
 * is the last word on uniqueness.
 */
export function createTemplateStore(db: Db, dialect: DialectName): TemplateStore {
  const lockChannel = async (trx: Db, channelId: string) => {
    if (dialect === 'postgres')
      await sql`select pg_advisory_xact_lock(hashtext(${`templates:${channelId}`}))`.execute(trx);
  };
  return {
    async list(channelId) {
      const rows = await db
        .selectFrom('request_templates')
        .selectAll()
        .where('channel_id', '=', channelId)
        .where('removed_at', 'is', null)
        .orderBy('name_key')
        .execute();
      return rows.map(toTemplate);
    },

    async get(id) {
      const row = await db
        .selectFrom('request_templates')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toTemplate(row) : undefined;
    },

    add(channelId, draft, by, now) {
      return db.transaction().execute(async (trx): Promise<TemplateWrite> => {
        await lockChannel(trx, channelId);
        const live = await trx
          .selectFrom('request_templates')
          .select(['id', 'name'])
          .where('channel_id', '=', channelId)
          .where('removed_at', 'is', null)
          .execute();
        // Compared by the key of today's nameKey, not the stored one, which an older nameKey made.
        if (live.some((t) => nameKey(t.name) === nameKey(draft.name)))
          return { ok: false, field: 'name', problem: { code: 'name-taken' } };
        if (live.length >= TEMPLATE_LIMITS.perChannel)
          return {
            ok: false,
            field: 'name',
            problem: { code: 'too-many', limit: TEMPLATE_LIMITS.perChannel },
          };
        const row: RequestTemplateRow = {
          id: randomUUID(),
          channel_id: channelId,
          ...draftColumns(draft),
          created_by: by,
          created_at: now.getTime(),
          updated_by: by,
          updated_at: now.getTime(),
          removed_by: null,
          removed_at: null,
        };
        await trx.insertInto('request_templates').values(row).execute();
        await recordChange(trx, row, 'added', by, now);
        return { ok: true, template: toTemplate(row) };
      });
    },

    update(id, draft, by, now) {
      return db.transaction().execute(async (trx): Promise<TemplateWrite> => {
        const current = await trx
          .selectFrom('request_templates')
          .select('channel_id')
          .where('id', '=', id)
          .where('removed_at', 'is', null)
          .executeTakeFirst();
        if (!current) return { ok: false, field: 'name', problem: { code: 'gone' } };
        await lockChannel(trx, current.channel_id);
        const others = await trx
          .selectFrom('request_templates')
          .select('name')
          .where('channel_id', '=', current.channel_id)
          .where('removed_at', 'is', null)
          .where('id', '<>', id)
          .execute();
        if (others.some((t) => nameKey(t.name) === nameKey(draft.name)))
          return { ok: false, field: 'name', problem: { code: 'name-taken' } };
        const updated = await trx
          .updateTable('request_templates')
          .set({ ...draftColumns(draft), updated_by: by, updated_at: now.getTime() })
          .where('id', '=', id)
          .where('removed_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!updated) return { ok: false, field: 'name', problem: { code: 'gone' } };
        await recordChange(trx, updated, 'edited', by, now);
        return { ok: true, template: toTemplate(updated) };
      });
    },

    remove(id, by, now) {
      return db.transaction().execute(async (trx) => {
        const removed = await trx
          .updateTable('request_templates')
          .set({ removed_by: by, removed_at: now.getTime() })
          .where('id', '=', id)
          .where('removed_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!removed) return false;
        await recordChange(trx, removed, 'removed', by, now);
        return true;
      });
    },

    async history(channelId, limit) {
      const rows = await db
        .selectFrom('template_changes')
        .selectAll()
        .where('channel_id', '=', channelId)
        .orderBy('changed_at', 'desc')
        // Changes in the same millisecond (or under a fixed clock) by the order they were made.
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toChange);
    },
  };
}

function draftColumns(draft: TemplateDraft) {
  return {
    name: draft.name,
    name_key: nameKey(draft.name),
    title_prefix: draft.titlePrefix,
    note_skeleton: draft.noteSkeleton,
    approver_slack_id: draft.approverChatId,
    later_steps: draft.laterSteps?.length ? JSON.stringify(draft.laterSteps) : null,
  };
}

let changes = 0;

/**
 * A change's id, which sorts in the order the changes were made here: the time, a counter for
 * those in the same millisecond, and a random part for other replicas.
 */
function changeId(): string {
  changes = (changes + 1) % 1e6;
  return `${Date.now().toString().padStart(15, '0')}-${changes.toString().padStart(6, '0')}-${randomUUID()}`;
}

async function recordChange(
  db: Db,
  template: Pick<RequestTemplateRow, 'id' | 'channel_id' | 'name'>,
  action: TemplateChange['action'],
  by: string,
  now: Date,
): Promise<void> {
  await db
    .insertInto('template_changes')
    .values({
      id: changeId(),
      template_id: template.id,
      channel_id: template.channel_id,
      name: template.name,
      action,
      changed_by: by,
      changed_at: now.getTime(),
    })
    .execute();
}

export function toTemplate(row: RequestTemplateRow): RequestTemplate {
  return {
    id: row.id,
    channelId: row.channel_id,
    name: row.name,
    titlePrefix: row.title_prefix,
    noteSkeleton: row.note_skeleton,
    approverChatId: row.approver_slack_id,
    ...(row.later_steps ? { laterSteps: JSON.parse(row.later_steps) as StepRule[] } : {}),
    createdBy: row.created_by,
    createdAt: new Date(Number(row.created_at)),
    updatedBy: row.updated_by,
    updatedAt: new Date(Number(row.updated_at)),
    removedBy: row.removed_by,
    removedAt: row.removed_at === null ? null : new Date(Number(row.removed_at)),
  };
}

function toChange(row: TemplateChangeRow): TemplateChange {
  return {
    templateId: row.template_id,
    name: row.name,
    action: row.action as TemplateChange['action'],
    by: row.changed_by,
    at: new Date(Number(row.changed_at)),
  };
}
