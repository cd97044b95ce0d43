import { adaptText, serviceLength } from './acceptable-text.ts';
import type { Decision, Department } from './approval-types.ts';
import { sameLogin } from './person.ts';
import { leadersOf } from './suggest-approver.ts';
import type { NewTrackedApproval } from './tracked-approval.ts';

/*
 * Approvals in several steps: a request made from a channel template that names further steps
 * goes, once its first approver approves, to the next one, then the next. Each started step is an
 * ordinary tracked approval in the service (its own number, reminders, escalation, handover);
 * the chain joins them. The rules here are pure: which approver a step resolves to, when it is
 * skipped, the line the next step's note carries, and what a step's decision means for the chain.
 * The store keeps the chain (store/chain-store.ts); the lifecycle's `decided`, `closed` and
 * `gave-up` rules ask `afterStep` (lifecycle/transition.ts); step-starter.ts starts due steps.
 */

/** Who decides a step: a person by their service login, or a leader of the requester's. */
export type StepRule =
  | { kind: 'person'; login: string }
  /**
   * From the service's department lookup of the requester: `nearest` is their nearest leader
   * (suggest-approver.ts's first), `second` the one above that, `product-line` the product line's.
   */
  | { kind: 'leader'; level: LeaderLevel };

export type LeaderLevel = 'nearest' | 'second' | 'product-line';

/** How many steps a template may add after the first (the form's approver). */
export const MAX_LATER_STEPS = 5;

/** The words a template's steps field takes for each leader rule, en and zh. */
const LEADER_WORDS: Record<LeaderLevel, readonly string[]> = {
  nearest: ['nearest leader', 'leader', '直属领导'],
  second: ['second-level leader', 'second leader', '二级领导'],
  'product-line': ['product-line leader', 'product line leader', '产品线领导'],
};

export type StepsProblem =
  | { code: 'too-many'; limit: number }
  | { code: 'not-a-step'; line: string };

/**
 * A template's later steps as typed: one a line, a service login (no spaces; a leading `@` is
 * dropped) or a leader rule's words; blank lines ignored.
 */
export function parseStepRules(
  text: string,
): { ok: true; rules: StepRule[] } | { ok: false; problem: StepsProblem } {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length > MAX_LATER_STEPS)
    return { ok: false, problem: { code: 'too-many', limit: MAX_LATER_STEPS } };
  const rules: StepRule[] = [];
  for (const line of lines) {
    const rule = ruleOfLine(line);
    if (!rule) return { ok: false, problem: { code: 'not-a-step', line } };
    rules.push(rule);
  }
  return { ok: true, rules };
}

function ruleOfLine(line: string): StepRule | undefined {
  const words = line.toLowerCase().replace(/\s+/g, ' ');
  for (const [level, said] of Object.entries(LEADER_WORDS) as [LeaderLevel, string[]][])
    if (said.includes(words)) return { kind: 'leader', level };
  const login = line.replace(/^@/, '');
  if (/\s/.test(login) || login.length < 2 || login.length > 100) return undefined;
  return { kind: 'person', login };
}

/** A rule as a template's steps field shows it (the inverse of parseStepRules, in English). */
export function ruleText(rule: StepRule): string {
  return rule.kind === 'person' ? rule.login : (LEADER_WORDS[rule.level][0] as string);
}

/**
 * The login a step's rule names for `requester`, from their department (a person's rule needs
 * none); undefined when the requester has no such leader. The second-level leader is the second
 * distinct leader of the requester's department; where the directory names one leader for every
 * level, it is the nearest leader's own nearest leader (`nearestsDepartment`, looked up by the
 * caller when this answers `ask-above`).
 */
export function ruleApprover(
  rule: StepRule,
  requester: string,
  department: Department | undefined,
  nearestsDepartment?: Department,
): string | undefined | 'ask-above' {
  if (rule.kind === 'person') return rule.login;
  if (!department) return undefined;
  if (rule.level === 'product-line') return department.leaders.productLine || undefined;
  const leaders = leadersOf(department, requester);
  if (rule.level === 'nearest') return leaders[0];
  if (leaders[1] || !leaders[0]) return leaders[1];
  if (!nearestsDepartment) return 'ask-above';
  return leadersOf(nearestsDepartment, leaders[0]).find((l) => !sameLogin(l, requester));
}

/** A step of a chain as it stands. */
export interface ChainStep {
  /** 1 for the first (the form's approver), then 2, 3… */
  position: number;
  state: StepState;
  /** Who it was started for (or skipped for); null before it was resolved. */
  approverLogin: string | null;
  djbh: string | null;
  decision: Decision | null;
  /** Who the service says decided; null when it did not say (then its approver did). */
  decidedBy: string | null;
  /** Why it was skipped; null unless it was. */
  skipReason?: SkipReason | null;
}

/**
 * - `waiting`: an earlier step is not approved yet;
 * - `due`: the step before was approved: to start (step-starter.ts);
 * - `starting`: a worker is calling the service (a worker that dies here leaves it `uncertain`);
 * - `started`: an approval in the service, tracked (`djbh`);
 * - `decided`: its approval was decided or stopped (see `decision`);
 * - `skipped`: its approver was the requester or approved an earlier step;
 * - `uncertain`: a start may or may not exist in the service; people are asked to look;
 * - `failed`: it could not be started (the service refused, or nobody to ask).
 */
export type StepState =
  | 'waiting'
  | 'due'
  | 'starting'
  | 'started'
  | 'decided'
  | 'skipped'
  | 'uncertain'
  | 'failed';

/** Why a step is not started: its approver is the requester, or approved an earlier step. */
export type SkipReason = 'requester' | 'approved-earlier';

/** Who approved the earlier steps: whoever the service says decided, else the step's approver. */
export function approvedBy(earlier: readonly ChainStep[]): string[] {
  return earlier
    .filter((s) => s.state === 'decided' && s.decision === 'approved')
    .map((s) => s.decidedBy ?? s.approverLogin)
    .filter((l): l is string => l !== null);
}

/** Whether a step for `approver` is skipped, and why; undefined when it is started. */
export function skipReason(
  approver: string,
  requester: string,
  earlier: readonly ChainStep[],
): SkipReason | undefined {
  if (sameLogin(approver, requester)) return 'requester';
  if (approvedBy(earlier).some((l) => sameLogin(l, approver))) return 'approved-earlier';
  return undefined;
}

/** What a step's approval ending means for its chain. */
export type StepOutcome = Decision | 'ended' | 'vanished' | 'gave-up';

/** A step's place in its chain, as the store reads it when its approval's event is applied. */
export interface StepOfChain {
  chainId: string;
  position: number;
  /** How many steps the chain has. */
  steps: number;
}

/**
 * What the chain records when a step's approval is decided or stopped: the step's outcome, and
 * either the next step due (approved, with steps left) or the chain's end with its outcome.
 */
export interface ChainEffect {
  chainId: string;
  position: number;
  outcome: Exclude<StepOutcome, 'pending'>;
  decidedBy: string | null;
  /** The step to start now; null when the chain ends here. */
  nextDue: number | null;
  /** The chain's outcome when it ends here; null when it goes on. */
  chainEnds: ChainOutcome | null;
}

/** How a chain ends: every step approved (or skipped), or stopped at one. */
export type ChainOutcome = 'approved' | 'rejected' | 'stopped';

/**
 * What a step's outcome means: approved goes on to the next step (or ends the chain approved
 * at the last); anything else (rejected, closed without a decision, given up) ends the chain,
 * and no later step starts. Undefined for pending (nothing happened).
 */
export function afterStep(
  step: StepOfChain,
  outcome: StepOutcome,
  decidedBy: string | null,
): ChainEffect | undefined {
  if (outcome === 'pending') return undefined;
  const base = { chainId: step.chainId, position: step.position, outcome, decidedBy };
  if (outcome !== 'approved')
    return {
      ...base,
      nextDue: null,
      chainEnds: outcome === 'rejected' ? 'rejected' : 'stopped',
    };
  return step.position < step.steps
    ? { ...base, nextDue: step.position + 1, chainEnds: null }
    : { ...base, nextDue: null, chainEnds: 'approved' };
}

/**
 * After step `position` was skipped (or approved): the next due, or the chain approved at the
 * last step.
 */
export function afterSkip(
  position: number,
  steps: number,
): Pick<ChainEffect, 'nextDue' | 'chainEnds'> {
  return position < steps
    ? { nextDue: position + 1, chainEnds: null }
    : { nextDue: null, chainEnds: 'approved' };
}

const WORDS = {
  en: {
    head: 'Earlier steps',
    approved: (by: string, djbh: string) => `approved by ${by} (${djbh})`,
    skipped: (who: string) => `skipped (${who})`,
    cut: (djbh: string) => `[cut to fit: the whole note is on ${djbh}]`,
  },
  zh: {
    head: '此前各步',
    approved: (by: string, djbh: string) => `${by} 已同意（${djbh}）`,
    skipped: (who: string) => `已跳过（${who}）`,
    cut: (djbh: string) => `[为符合长度已截断：完整说明见 ${djbh}]`,
  },
} as const;

/**
 * The note of a later step: the earlier steps' decisions and numbers on one line, then the
 * request's note. Acceptable to the service (acceptable-text.ts: no `'`, nothing outside its
 * character set) and within `noteLimit`: the request's note, already accepted once, is cut with
 * a visible mark naming the first step's number (where it is whole) only when the line makes it
 * too long, since nobody is there to shorten it.
 */
export function laterStepNote(
  note: string,
  earlier: readonly ChainStep[],
  locale: string,
  noteLimit: number,
): string {
  const w = locale.toLowerCase().startsWith('zh') ? WORDS.zh : WORDS.en;
  const parts = earlier.map((s) =>
    s.state === 'skipped'
      ? `${s.position}. ${w.skipped(s.approverLogin ?? '?')}`
      : `${s.position}. ${w.approved(s.decidedBy ?? s.approverLogin ?? '?', s.djbh ?? '?')}`,
  );
  const line = adaptText(`${w.head}: ${parts.join('; ')}`).text;
  const whole = `${line}\n\n${note}`;
  if (serviceLength(whole) <= noteLimit) return whole;
  const first = earlier.find((s) => s.djbh)?.djbh ?? '?';
  const mark = `\n${w.cut(first)}`;
  const room = noteLimit - serviceLength(line) - 2 - serviceLength(mark);
  return `${line}\n\n${[...note].slice(0, Math.max(0, room)).join('')}${mark}`;
}

/** What a request of several steps records with its first step: the steps after it. */
export interface NewChain {
  laterSteps: readonly StepRule[];
}

/** A chain as the worker that starts its due step reads it. */
export interface ChainOfStep {
  id: string;
  requesterLogin: string;
  title: string;
  /** The request's note as step 1 sent it (acceptable to the service already). */
  note: string;
  locale: string;
  steps: number;
  outcome: ChainOutcome | null;
  /** When it ended (its outcome recorded); null while it goes on. */
  endedAt?: Date | null;
}

/** Which step a worker holds, under which claim (its lease is on the database's clock). */
export interface StepClaim {
  chainId: string;
  position: number;
  token: string;
}

/** A due step claimed by a worker, with what it needs to start it. */
export interface ClaimedStep {
  claim: StepClaim;
  rule: StepRule;
  chain: ChainOfStep;
  /** The chain's steps before this one, in order. */
  earlier: ChainStep[];
}

/**
 * The chains on record; the store executes it (store/chain-store.ts). Every write is fenced by
 * the step's claim, so a worker whose lease ran out (another claimed it, or it was marked
 * uncertain) changes nothing.
 */
export interface ApprovalChains {
  /** One due step, claimed for `leaseMs`; undefined when none is due. */
  claimDue(leaseMs: number): Promise<ClaimedStep | undefined>;
  /**
   * Steps left `starting` whose worker's lease ran out (it died, or lost the database, between
   * marking and recording): marked `uncertain` and said in the thread. Never started again by
   * the app: the service has no idempotency key. Answers how many.
   */
  markAbandoned(now: Date): Promise<number>;
  /** `due` → `starting` for `approver`, before the service is called; false: the claim is lost. */
  starting(claim: StepClaim, approver: string, now: Date): Promise<boolean>;
  /**
   * The step's approval as started in the service, recorded with its announcements and linked
   * to the step in one transaction. The approval is recorded even if the claim was lost (it
   * exists upstream); answers whether the step was linked.
   */
  started(claim: StepClaim, approval: NewTrackedApproval, now: Date): Promise<boolean>;
  /** Skipped (`why`), the next step due or the chain approved; said in the thread. */
  skipped(claim: StepClaim, approver: string, why: SkipReason, now: Date): Promise<boolean>;
  /**
   * Nothing was sent to the service (`due` or `starting`): due again, its lease given back, for
   * the next pass.
   */
  release(claim: StepClaim): Promise<void>;
  /** Nothing was started and it cannot be: the chain stops there; said in the thread. */
  failed(claim: StepClaim, approver: string | null, now: Date): Promise<boolean>;
  /** The start's answer was lost: it may exist in the service; said in the thread. */
  uncertain(claim: StepClaim, now: Date): Promise<boolean>;
  /**
   * An `uncertain` step made `due` again: someone looked in the service and found it not
   * started. False when it is not uncertain (started meanwhile, or asked twice).
   */
  startAgain(chainId: string, position: number, now: Date): Promise<boolean>;
  /** The chain whose step `djbh` is, with its steps; undefined when it is not a step of one. */
  ofApproval(djbh: string): Promise<{ chain: ChainOfStep; steps: ChainStep[] } | undefined>;
}
