import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AnnouncementKind } from '../approvals/announcement-rules.ts';
import type { Decision } from '../approvals/approval-types.ts';
import type { StepPlace, StepPlaces } from '../approvals/step-places.ts';
import {
  type ApprovalChains,
  afterSkip,
  type ChainEffect,
  type ChainOfStep,
  type ChainOutcome,
  type ChainStep,
  type ClaimedStep,
  type NewChain,
  type SkipReason,
  type StepClaim,
  type StepOfChain,
  type StepRule,
  type StepState,
} from '../approvals/steps.ts';
import type { NewTrackedApproval } from '../approvals/tracked-approval.ts';
import { insertStarted } from './approval-repository.ts';
import type { DialectName } from './database.ts';
import { dbNowMs, wholeMs } from './db-clock.ts';
import { announcementRow, insertAnnouncements } from './outbox-store.ts';
import { toApproval } from './rows.ts';
import type { ApprovalChainRow, ApprovalChainStepRow, Database } from './schema.ts';

/*
 * The chains of requests in several steps (approvals/steps.ts) over Kysely: a chain row keyed by
 * its first step's number, one row per step. What a step's decision means is the lifecycle's
 * (`recordChainEffect`, written by apply-transition.ts under the decision's fence); the worker
 * (approvals/step-starter.ts) claims due steps here, each write fenced by its claim.
 */

type Db = Kysely<Database>;

/** The chain and its steps, recorded with its first step's approval (the caller's transaction). */
export async function insertChain(
  trx: Db,
  first: NewTrackedApproval,
  chain: NewChain,
  now: Date,
): Promise<void> {
  const at = now.getTime();
  const steps = 1 + chain.laterSteps.length;
  await trx
    .insertInto('approval_chains')
    .values({
      id: first.djbh,
      requester_login: first.parties.requester.login,
      title: first.request.title,
      note: first.request.note,
      locale: first.request.locale,
      steps,
      outcome: null,
      created_at: at,
      ended_at: null,
    })
    .execute();
  const rules: StepRule[] = [
    { kind: 'person', login: first.parties.approver.login },
    ...chain.laterSteps,
  ];
  await trx
    .insertInto('approval_chain_steps')
    .values(
      rules.map((rule, i) => ({
        chain_id: first.djbh,
        position: i + 1,
        rule: JSON.stringify(rule),
        state: (i === 0 ? 'started' : 'waiting') satisfies StepState,
        approver_login: i === 0 ? first.parties.approver.login : null,
        djbh: i === 0 ? first.djbh : null,
        decision: null,
        decided_by: null,
        skip_reason: null,
        claim: null,
        lease_until: null,
        updated_at: at,
      })),
    )
    .execute();
}

/** Whether the approval `djbh` is a step of a chain, and which (a fact for the lifecycle). */
export async function stepOfApproval(db: Db, djbh: string): Promise<StepOfChain | undefined> {
  const row = await db
    .selectFrom('approval_chain_steps as s')
    .innerJoin('approval_chains as c', 'c.id', 's.chain_id')
    .select(['s.chain_id', 's.position', 'c.steps'])
    .where('s.djbh', '=', djbh)
    .executeTakeFirst();
  return row ? { chainId: row.chain_id, position: row.position, steps: row.steps } : undefined;
}

/**
 * What a step's decision (or its end without one) means for its chain, as the lifecycle said:
 * the step decided, then the next step due or the chain's outcome. Once: a step already decided
 * changes nothing (a decision recorded twice, or ended after it was decided).
 */
export async function recordChainEffect(db: Db, effect: ChainEffect, now: Date): Promise<void> {
  const at = now.getTime();
  const decided = await db
    .updateTable('approval_chain_steps')
    .set({
      state: 'decided' satisfies StepState,
      decision: effect.outcome,
      decided_by: effect.decidedBy,
      updated_at: at,
    })
    .where('chain_id', '=', effect.chainId)
    .where('position', '=', effect.position)
    .where('state', '=', 'started' satisfies StepState)
    .executeTakeFirst();
  if (Number(decided.numUpdatedRows) === 0) return;
  await goOn(db, effect.chainId, effect, at);
  await refreshFirst(db, effect.chainId, `step-${effect.position}-${effect.outcome}`, now);
}

/** The next step due, or the chain's end. */
async function goOn(
  db: Db,
  chainId: string,
  next: Pick<ChainEffect, 'nextDue' | 'chainEnds'>,
  at: number,
): Promise<void> {
  if (next.nextDue !== null)
    await db
      .updateTable('approval_chain_steps')
      .set({ state: 'due' satisfies StepState, updated_at: at })
      .where('chain_id', '=', chainId)
      .where('position', '=', next.nextDue)
      .where('state', '=', 'waiting' satisfies StepState)
      .execute();
  if (next.chainEnds !== null) await endChain(db, chainId, next.chainEnds, at);
}

async function endChain(db: Db, chainId: string, outcome: ChainOutcome, at: number) {
  const ended = await db
    .updateTable('approval_chains')
    .set({ outcome, ended_at: at })
    .where('id', '=', chainId)
    .where('outcome', 'is', null)
    .executeTakeFirst();
  if (Number(ended.numUpdatedRows) > 0) await completeWorkflowStep(db, chainId, at);
}

/**
 * A request in several steps that a Workflow Builder step started: the step is owed the
 * request's outcome now that it ended (its `step-complete`, on the first step's approval, which
 * holds the step's execution id; the lifecycle records none for a step of a chain).
 */
async function completeWorkflowStep(db: Db, chainId: string, at: number): Promise<void> {
  const row = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where('djbh', '=', chainId)
    .where('function_execution_id', 'is not', null)
    .executeTakeFirst();
  if (!row) return;
  const first = toApproval(row);
  await insertAnnouncements(db, [
    announcementRow(first.djbh, first, 'step-complete', null, new Date(at)),
  ]);
}

/**
 * The first step's request message, edited to show where the chain stands now (its
 * `parent-update`, named by what changed so each change edits it once).
 */
async function refreshFirst(db: Db, chainId: string, detail: string, now: Date): Promise<void> {
  const row = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where('djbh', '=', chainId)
    .executeTakeFirst();
  if (!row) return;
  const first = toApproval(row);
  await insertAnnouncements(db, [
    announcementRow(first.djbh, first, 'parent-update', null, now, null, detail),
  ]);
}

/** The step's announcement kinds: what the thread is told of a step nobody decided. */
type StepNoteKind = Extract<AnnouncementKind, 'step-skipped' | 'step-uncertain' | 'step-failed'>;

/**
 * A note about step `position` in the chain's thread: recorded on the latest started step's
 * approval (whose replies go to the first step's thread), numbered by the position.
 */
async function noteInThread(
  db: Db,
  chainId: string,
  position: number,
  kind: StepNoteKind,
  now: Date,
): Promise<void> {
  const anchor = await db
    .selectFrom('approval_chain_steps')
    .select('djbh')
    .where('chain_id', '=', chainId)
    .where('position', '<', position)
    .where('djbh', 'is not', null)
    .orderBy('position', 'desc')
    .executeTakeFirst();
  if (!anchor?.djbh) return;
  const row = await db
    .selectFrom('tracked_approvals')
    .selectAll()
    .where('djbh', '=', anchor.djbh)
    .executeTakeFirst();
  if (!row) return;
  const approval = toApproval(row);
  await insertAnnouncements(db, [
    announcementRow(approval.djbh, approval, kind, null, now, position),
  ]);
}

const toStep = (row: ApprovalChainStepRow): ChainStep => ({
  position: row.position,
  state: row.state as StepState,
  approverLogin: row.approver_login,
  djbh: row.djbh,
  decision: row.decision as Decision | null,
  decidedBy: row.decided_by,
  skipReason: row.skip_reason as SkipReason | null,
});

const toChain = (row: ApprovalChainRow): ChainOfStep => ({
  id: row.id,
  requesterLogin: row.requester_login,
  title: row.title,
  note: row.note,
  locale: row.locale,
  steps: row.steps,
  outcome: row.outcome as ChainOutcome | null,
  endedAt: row.ended_at === null ? null : new Date(Number(row.ended_at)),
});

/** The ApprovalChains port over Kysely, with the places of steps the lists show. */
export function createChainStore(db: Db, dialect: DialectName): ApprovalChains & StepPlaces {
  return {
    ...stepClaims(db, dialect),
    ...stepOutcomes(db, dialect),
    ...stepEndings(db),
    placesOf: (djbhs) => placesOf(db, djbhs),
  };
}

/** Which of these approvals are steps of a chain, and where: one query for a whole list. */
async function placesOf(db: Db, djbhs: readonly string[]): Promise<Map<string, StepPlace>> {
  const places = new Map<string, StepPlace>();
  if (djbhs.length === 0) return places;
  const rows = await db
    .selectFrom('approval_chain_steps as s')
    .innerJoin('approval_chains as c', 'c.id', 's.chain_id')
    .select(['s.djbh', 's.position', 'c.steps'])
    .where('s.djbh', 'in', [...djbhs])
    .execute();
  for (const r of rows) if (r.djbh) places.set(r.djbh, { position: r.position, steps: r.steps });
  return places;
}

const changed = (r: { numUpdatedRows: bigint }) => Number(r.numUpdatedRows) > 0;

const stepsOf = async (db: Db, chainId: string) =>
  (
    await db
      .selectFrom('approval_chain_steps')
      .selectAll()
      .where('chain_id', '=', chainId)
      .orderBy('position')
      .execute()
  ).map(toStep);

/** One due step whose lease is free, claimed for `leaseMs` on the database's clock. */
async function claimOneDue(
  db: Db,
  dialect: DialectName,
  leaseMs: number,
): Promise<ClaimedStep | undefined> {
  const token = randomUUID();
  const candidates = await db
    .selectFrom('approval_chain_steps')
    .select(['chain_id', 'position'])
    .where('state', '=', 'due' satisfies StepState)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', dbNowMs(dialect))]))
    .orderBy('updated_at')
    .limit(5)
    .execute();
  for (const c of candidates) {
    const taken = await db
      .updateTable('approval_chain_steps')
      .set((eb) => ({ claim: token, lease_until: eb(dbNowMs(dialect), '+', wholeMs(leaseMs)) }))
      .where('chain_id', '=', c.chain_id)
      .where('position', '=', c.position)
      .where('state', '=', 'due' satisfies StepState)
      .where((eb) =>
        eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', dbNowMs(dialect))]),
      )
      .returningAll()
      .executeTakeFirst();
    if (!taken) continue;
    const chain = await db
      .selectFrom('approval_chains')
      .selectAll()
      .where('id', '=', c.chain_id)
      .executeTakeFirstOrThrow();
    const steps = await stepsOf(db, c.chain_id);
    return {
      claim: { chainId: c.chain_id, position: c.position, token },
      rule: JSON.parse(taken.rule) as StepRule,
      chain: toChain(chain),
      earlier: steps.filter((s) => s.position < c.position),
    };
  }
  return undefined;
}

/** Claiming due steps, and what becomes of a claim before the service is called. */
function stepClaims(
  db: Db,
  dialect: DialectName,
): Pick<ApprovalChains, 'claimDue' | 'markAbandoned' | 'starting' | 'release'> {
  const held = (claim: StepClaim) =>
    db
      .updateTable('approval_chain_steps')
      .where('chain_id', '=', claim.chainId)
      .where('position', '=', claim.position)
      .where('claim', '=', claim.token);
  return {
    claimDue: (leaseMs) => claimOneDue(db, dialect, leaseMs),

    markAbandoned: (now) =>
      db.transaction().execute(async (trx) => {
        const lost = await trx
          .updateTable('approval_chain_steps')
          .set({
            state: 'uncertain' satisfies StepState,
            lease_until: null,
            updated_at: now.getTime(),
          })
          .where('state', '=', 'starting' satisfies StepState)
          .where('lease_until', '<', dbNowMs(dialect))
          .returning(['chain_id', 'position'])
          .execute();
        for (const s of lost) {
          await noteInThread(trx, s.chain_id, s.position, 'step-uncertain', now);
          await refreshFirst(trx, s.chain_id, `step-${s.position}-uncertain`, now);
        }
        return lost.length;
      }),

    async starting(claim, approver, now) {
      return changed(
        await held(claim)
          .set({
            state: 'starting' satisfies StepState,
            approver_login: approver,
            updated_at: now.getTime(),
          })
          .where('state', '=', 'due' satisfies StepState)
          .where('lease_until', '>=', dbNowMs(dialect))
          .executeTakeFirst(),
      );
    },

    async release(claim) {
      await held(claim)
        .set({ state: 'due' satisfies StepState, lease_until: null })
        .where('state', 'in', ['due', 'starting'] satisfies StepState[])
        .execute();
    },
  };
}

/** A claimed step started, or skipped. */
function stepOutcomes(db: Db, dialect: DialectName): Pick<ApprovalChains, 'started' | 'skipped'> {
  return {
    started: (claim, approval, now) =>
      db.transaction().execute(async (trx) => {
        await insertStarted(trx, dialect, approval, now);
        const linked = await trx
          .updateTable('approval_chain_steps')
          .set({
            state: 'started' satisfies StepState,
            djbh: approval.djbh,
            approver_login: approval.parties.approver.login,
            lease_until: null,
            updated_at: now.getTime(),
          })
          .where('chain_id', '=', claim.chainId)
          .where('position', '=', claim.position)
          .where('claim', '=', claim.token)
          .where('state', 'in', ['starting', 'uncertain'] satisfies StepState[])
          .executeTakeFirst();
        if (changed(linked))
          await refreshFirst(trx, claim.chainId, `step-${claim.position}-started`, now);
        return changed(linked);
      }),

    skipped: (claim, approver, why, now) =>
      db.transaction().execute(async (trx) => {
        const chain = await trx
          .selectFrom('approval_chains')
          .select('steps')
          .where('id', '=', claim.chainId)
          .executeTakeFirstOrThrow();
        const r = await trx
          .updateTable('approval_chain_steps')
          .set({
            state: 'skipped' satisfies StepState,
            approver_login: approver,
            skip_reason: why,
            lease_until: null,
            updated_at: now.getTime(),
          })
          .where('chain_id', '=', claim.chainId)
          .where('position', '=', claim.position)
          .where('claim', '=', claim.token)
          .where('state', '=', 'due' satisfies StepState)
          .executeTakeFirst();
        if (!changed(r)) return false;
        await goOn(trx, claim.chainId, afterSkip(claim.position, chain.steps), now.getTime());
        await noteInThread(trx, claim.chainId, claim.position, 'step-skipped', now);
        await refreshFirst(trx, claim.chainId, `step-${claim.position}-skipped`, now);
        return true;
      }),
  };
}

/** A step that did not start, started again, and the reads of a chain. */
function stepEndings(
  db: Db,
): Pick<ApprovalChains, 'failed' | 'uncertain' | 'startAgain' | 'ofApproval'> {
  return {
    failed: (claim, approver, now) =>
      db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('approval_chain_steps')
          .set({
            state: 'failed' satisfies StepState,
            approver_login: approver,
            lease_until: null,
            updated_at: now.getTime(),
          })
          .where('chain_id', '=', claim.chainId)
          .where('position', '=', claim.position)
          .where('claim', '=', claim.token)
          .where('state', 'in', ['due', 'starting'] satisfies StepState[])
          .executeTakeFirst();
        if (!changed(r)) return false;
        await endChain(trx, claim.chainId, 'stopped', now.getTime());
        await noteInThread(trx, claim.chainId, claim.position, 'step-failed', now);
        await refreshFirst(trx, claim.chainId, `step-${claim.position}-failed`, now);
        return true;
      }),

    uncertain: (claim, now) =>
      db.transaction().execute(async (trx) => {
        const r = await trx
          .updateTable('approval_chain_steps')
          .set({
            state: 'uncertain' satisfies StepState,
            lease_until: null,
            updated_at: now.getTime(),
          })
          .where('chain_id', '=', claim.chainId)
          .where('position', '=', claim.position)
          .where('claim', '=', claim.token)
          .where('state', '=', 'starting' satisfies StepState)
          .executeTakeFirst();
        if (!changed(r)) return false;
        await noteInThread(trx, claim.chainId, claim.position, 'step-uncertain', now);
        await refreshFirst(trx, claim.chainId, `step-${claim.position}-uncertain`, now);
        return true;
      }),

    async startAgain(chainId, position, now) {
      // A new claim: a worker that may still record the lost start is no longer the step's.
      const r = await db
        .updateTable('approval_chain_steps')
        .set({
          state: 'due' satisfies StepState,
          claim: null,
          lease_until: null,
          updated_at: now.getTime(),
        })
        .where('chain_id', '=', chainId)
        .where('position', '=', position)
        .where('state', '=', 'uncertain' satisfies StepState)
        .executeTakeFirst();
      return changed(r);
    },

    async ofApproval(djbh) {
      const step = await stepOfApproval(db, djbh);
      if (!step) return undefined;
      const chain = await db
        .selectFrom('approval_chains')
        .selectAll()
        .where('id', '=', step.chainId)
        .executeTakeFirst();
      return chain ? { chain: toChain(chain), steps: await stepsOf(db, step.chainId) } : undefined;
    },
  };
}
