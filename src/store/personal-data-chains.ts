import { type Kysely, type SqlBool, sql } from 'kysely';
import { isTheirs, type PersonalDataSection, type PersonKeys } from '../approvals/personal-data.ts';
import type { StepRule } from '../approvals/steps.ts';
import type { ApprovalChainRow, ApprovalChainStepRow, Database } from './schema.ts';

/*
 * One person's data in requests in several steps (approvals/steps.ts), as personal-data.ts says
 * for approvals: a chain they asked for keeps its outcome and times, with them replaced by the
 * erase's pseudonym and its title and note (their words) blanked; a step they decided, were asked
 * or were named by (its rule) keeps its outcome, with them replaced by the pseudonym. A chain
 * still going on is left as it is (its later steps still start in the requester's name, for the
 * approvers its rules name): erase says so, and is run again once it ended. A template's later
 * steps naming them lose those steps (the template keeps working without them), and workflow
 * confirmations whose later steps name them go, as the rest of their confirmations do.
 */

type Db = Kysely<Database>;

/** `lower(column)` contains one of the texts (a superset: each row is checked with isTheirs). */
function mentions(column: string, texts: readonly string[]) {
  const like = (t: string) => `%${t.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<SqlBool>`(${sql.join(
    texts.map((t) => sql`lower(${sql.ref(column)}) like ${like(t)} escape '\\'`),
    sql` or `,
  )})`;
}

/** Whether a rule (as stored, JSON) names the person. */
function ruleNamesThem(rule: string | null | undefined, keys: PersonKeys): boolean {
  if (!rule) return false;
  const parsed = JSON.parse(rule) as StepRule;
  return parsed.kind === 'person' && isTheirs(keys, parsed.login);
}

const stepNamesThem = (row: ApprovalChainStepRow, keys: PersonKeys) =>
  isTheirs(keys, row.approver_login) ||
  isTheirs(keys, row.decided_by) ||
  ruleNamesThem(row.rule, keys);

async function stepsNaming(db: Db, keys: PersonKeys): Promise<ApprovalChainStepRow[]> {
  if (keys.logins.length === 0) return [];
  const rows = await db
    .selectFrom('approval_chain_steps')
    .selectAll()
    .where((eb) =>
      eb.or([
        mentions('approver_login', keys.logins),
        mentions('decided_by', keys.logins),
        mentions('rule', keys.logins),
      ]),
    )
    .orderBy('chain_id')
    .orderBy('position')
    .execute();
  return rows.filter((r) => stepNamesThem(r, keys));
}

/** Chains they asked for, and chains with a step naming them. */
async function chainsNaming(db: Db, keys: PersonKeys): Promise<ApprovalChainRow[]> {
  if (keys.logins.length === 0) return [];
  const ids = [...new Set((await stepsNaming(db, keys)).map((s) => s.chain_id))];
  const rows = await db
    .selectFrom('approval_chains')
    .selectAll()
    .where((eb) =>
      eb.or([
        mentions('requester_login', keys.logins),
        ...(ids.length > 0 ? [eb('id', 'in', ids)] : []),
      ]),
    )
    .orderBy('id')
    .execute();
  return rows.filter((r) => isTheirs(keys, r.requester_login) || ids.includes(r.id));
}

/** Requests in several steps that are theirs or name them, still going on: left by an erase. */
export async function openChains(db: Db, keys: PersonKeys): Promise<string[]> {
  return (await chainsNaming(db, keys)).filter((c) => c.outcome === null).map((c) => c.id);
}

function chainsSection(db: Db): PersonalDataSection {
  return {
    name: 'requests in several steps',
    find: (keys) => chainsNaming(db, keys),
    async erase(keys, pseudonym) {
      let changed = 0;
      for (const chain of await chainsNaming(db, keys)) {
        if (chain.outcome === null || !isTheirs(keys, chain.requester_login)) continue;
        const r = await db
          .updateTable('approval_chains')
          .set({ requester_login: pseudonym, title: '', note: '' })
          .where('id', '=', chain.id)
          .where('outcome', 'is not', null)
          .executeTakeFirst();
        changed += Number(r.numUpdatedRows);
      }
      return changed;
    },
  };
}

function chainStepsSection(db: Db): PersonalDataSection {
  return {
    name: 'steps of requests',
    find: (keys) => stepsNaming(db, keys),
    async erase(keys, pseudonym) {
      let changed = 0;
      for (const step of await stepsNaming(db, keys)) {
        const ended = await db
          .selectFrom('approval_chains')
          .select('id')
          .where('id', '=', step.chain_id)
          .where('outcome', 'is not', null)
          .executeTakeFirst();
        if (!ended) continue;
        await db
          .updateTable('approval_chain_steps')
          .set({
            ...(isTheirs(keys, step.approver_login) ? { approver_login: pseudonym } : {}),
            ...(isTheirs(keys, step.decided_by) ? { decided_by: pseudonym } : {}),
            ...(ruleNamesThem(step.rule, keys)
              ? { rule: JSON.stringify({ kind: 'person', login: pseudonym } satisfies StepRule) }
              : {}),
          })
          .where('chain_id', '=', step.chain_id)
          .where('position', '=', step.position)
          .execute();
        changed++;
      }
      return changed;
    },
  };
}

/** Later steps (JSON StepRule[]) without those naming the person; null when none is left. */
function stepsWithoutThem(text: string, keys: PersonKeys): string | null {
  const rules = (JSON.parse(text) as StepRule[]).filter(
    (r) => !(r.kind === 'person' && isTheirs(keys, r.login)),
  );
  return rules.length > 0 ? JSON.stringify(rules) : null;
}

const laterStepsNameThem = (text: string | null | undefined, keys: PersonKeys) =>
  Boolean(text) && stepsWithoutThem(text as string, keys) !== text;

/** Templates whose later steps name them: the template keeps working without that step. */
function templateStepsSection(db: Db): PersonalDataSection {
  const naming = async (keys: PersonKeys) =>
    keys.logins.length === 0
      ? []
      : (
          await db
            .selectFrom('request_templates')
            .selectAll()
            .where(mentions('later_steps', keys.logins))
            .orderBy('id')
            .execute()
        ).filter((t) => laterStepsNameThem(t.later_steps, keys));
  return {
    name: 'template steps naming them',
    find: naming,
    async erase(keys) {
      let changed = 0;
      for (const t of await naming(keys)) {
        await db
          .updateTable('request_templates')
          .set({ later_steps: stepsWithoutThem(t.later_steps as string, keys) })
          .where('id', '=', t.id)
          .execute();
        changed++;
      }
      return changed;
    },
  };
}

/** Workflow confirmations whose later steps name them: deleted, as those naming them otherwise. */
function confirmationStepsSection(db: Db): PersonalDataSection {
  const naming = async (keys: PersonKeys) =>
    keys.logins.length === 0
      ? []
      : (
          await db
            .selectFrom('step_confirmations')
            .selectAll()
            .where(mentions('later_steps', keys.logins))
            .orderBy('execution_id')
            .execute()
        ).filter((c) => laterStepsNameThem(c.later_steps, keys));
  return {
    name: 'workflow confirmations naming them in later steps',
    find: naming,
    async erase(keys) {
      const ids = (await naming(keys)).map((c) => c.execution_id);
      if (ids.length === 0) return 0;
      const r = await db
        .deleteFrom('step_confirmations')
        .where('execution_id', 'in', ids)
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    },
  };
}

/** The sections of requests in several steps, in the order they are erased. */
export function chainSections(db: Db): PersonalDataSection[] {
  return [
    chainsSection(db),
    chainStepsSection(db),
    templateStepsSection(db),
    confirmationStepsSection(db),
  ];
}
