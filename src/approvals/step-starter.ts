import type { ApprovalService } from './approval-types.ts';
import { currentDelegate, type Delegations } from './delegation.ts';
import { UnknownApproverError } from './service-directory.ts';
import { NotSavedError, StoppingError, startTrackedApproval } from './start-approval.ts';
import {
  type ApprovalChains,
  type ClaimedStep,
  laterStepNote,
  ruleApprover,
  skipReason,
} from './steps.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/*
 * The worker that starts due steps of requests in several steps: the lifecycle recorded "the next
 * step is due" with the decision that made it so (transition.ts's `decided`); this claims it,
 * resolves its approver (the rule, then any delegate, at the moment it starts), skips it or
 * starts it in the service, and records the outcome, each write fenced by its claim.
 *
 * The service has no idempotency key: a start whose answer is lost may or may not exist there.
 * So the step is marked `starting` before the call; a worker that dies after the call and before
 * recording leaves it `starting`, and the next pass marks it `uncertain` once its lease runs out
 * and asks the requester in the thread to look, with a button to start it after all. Never
 * started again blindly.
 */

export interface StepStarterDeps {
  chains: ApprovalChains;
  service: Pick<ApprovalService, 'startApproval' | 'getDepartment'>;
  /** Where the step's approval is recorded (its row and announcements, with the chain's link). */
  firstStep: (djbh: string) => Promise<TrackedApproval | undefined>;
  delegations?: Pick<Delegations, 'inForceAt'>;
  now: () => Date;
  noteLimit: number;
  /** False once this replica is stopping too soon to see a start through. */
  mayStart?: () => boolean;
  logger: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
  };
}

export interface StepPass {
  started: number;
  skipped: number;
  failed: number;
  uncertain: number;
  /** Claimed but not started now (nothing sent; due again). */
  retried: number;
}

/** How many due steps one pass starts at most: the rest wait for the next pass. */
const PER_PASS = 20;

/** One pass: abandoned starts marked uncertain, then due steps started (or skipped). */
export async function startDueSteps(
  deps: StepStarterDeps,
  options: { leaseMs: number },
): Promise<StepPass> {
  const pass: StepPass = { started: 0, skipped: 0, failed: 0, uncertain: 0, retried: 0 };
  pass.uncertain += await deps.chains.markAbandoned(deps.now());
  for (let i = 0; i < PER_PASS; i++) {
    if (deps.mayStart && !deps.mayStart()) break;
    const due = await deps.chains.claimDue(options.leaseMs);
    if (!due) break;
    const outcome = await startStep(deps, due);
    pass[outcome]++;
  }
  return pass;
}

type StepOutcome = keyof StepPass;

/** Starts (or skips) one claimed step. */
export async function startStep(deps: StepStarterDeps, due: ClaimedStep): Promise<StepOutcome> {
  const { chains } = deps;
  const { chain, claim } = due;
  const first = await deps.firstStep(chain.id);
  // A chain stopped meanwhile (a step ended without a decision) starts nothing more.
  if (chain.outcome !== null) {
    deps.logger.info(
      { chain: chain.id, step: claim.position },
      'step not started: the request ended',
    );
    await chains.failed(claim, null, deps.now());
    return 'failed';
  }
  const approver = await resolveApprover(deps, due);
  if (approver === LOOKUP_FAILED) {
    // The service could not say who the leader is now: nothing sent, tried on the next pass.
    await chains.release(claim);
    return 'retried';
  }
  if (!first || !approver) {
    deps.logger.warn(
      { chain: chain.id, step: claim.position, rule: due.rule, first: Boolean(first) },
      'step not started: the requester has no such leader',
    );
    await chains.failed(claim, approver ?? null, deps.now());
    return 'failed';
  }
  const skip = skipReason(approver, chain.requesterLogin, due.earlier);
  if (skip) {
    await chains.skipped(claim, approver, skip, deps.now());
    return 'skipped';
  }
  if (deps.mayStart && !deps.mayStart()) {
    await chains.release(claim);
    return 'retried';
  }
  // Marked before the call: a worker that dies past this point leaves a trace (markAbandoned).
  if (!(await chains.starting(claim, approver, deps.now()))) return 'retried';
  return callService(deps, due, first, approver);
}

const LOOKUP_FAILED = Symbol('lookup failed');

/**
 * The step's approver: its rule for the requester, then their delegate at this moment;
 * undefined when the requester has no such leader.
 */
async function resolveApprover(
  deps: StepStarterDeps,
  due: ClaimedStep,
): Promise<string | undefined | typeof LOOKUP_FAILED> {
  const requester = due.chain.requesterLogin;
  let named: string | undefined;
  try {
    const department =
      due.rule.kind === 'leader' ? await deps.service.getDepartment(requester) : undefined;
    named = ruleApprover(due.rule, requester, department) as string | undefined;
    if ((named as string) === 'ask-above' && department) {
      const nearest = ruleApprover({ kind: 'leader', level: 'nearest' }, requester, department);
      const above = await deps.service.getDepartment(nearest as string);
      named = ruleApprover(due.rule, requester, department, above) as string | undefined;
    }
  } catch {
    return LOOKUP_FAILED;
  }
  if (!named) return undefined;
  return (await currentDelegate(deps, named, deps.now(), requester)).approver;
}

/** The call itself and what its outcome means for the step. */
async function callService(
  deps: StepStarterDeps,
  due: ClaimedStep,
  first: TrackedApproval,
  approver: string,
): Promise<StepOutcome> {
  const { chain, claim } = due;
  const recorded = { linked: false };
  try {
    await startTrackedApproval(
      {
        service: deps.service,
        now: deps.now,
        store: {
          createApproval: async (approval, now) => {
            recorded.linked = await deps.chains.started(claim, approval, now);
          },
        },
      },
      {
        input: {
          requester: chain.requesterLogin,
          approver,
          title: chain.title,
          note: laterStepNote(chain.note, due.earlier, chain.locale, deps.noteLimit),
        },
        teamId: first.teamId,
        // In the first step's thread: one thread tells the whole request.
        channelId: first.slack.channelId,
        threadTs: first.slack.threadTs ?? first.slack.messageTs,
        template: first.request.template?.id
          ? { id: first.request.template.id, name: first.request.template.name }
          : null,
        requesterSlackId: first.parties.requester.slackId,
        approverSlackId: null,
        locale: first.request.locale,
      },
    );
  } catch (error) {
    return notStarted(deps, due, error);
  }
  deps.logger.info(
    { chain: chain.id, step: claim.position, linked: recorded.linked },
    'step started',
  );
  return 'started';
}

/**
 * What a failed start says, read duck-typed (the domain does not import the service client's
 * error): `maybeCreated` (the request was sent and its answer lost), a refusal of the request
 * itself (`rejected`, `invalid-request`), or nothing sent at all.
 */
type StartFailure = 'maybe-created' | 'refused' | 'not-sent';

export function startFailure(error: unknown): StartFailure {
  if (error instanceof NotSavedError) return 'maybe-created';
  if (error instanceof UnknownApproverError) return 'refused';
  if (error instanceof StoppingError) return 'not-sent';
  const e = error as { maybeCreated?: unknown; kind?: unknown };
  if (e?.maybeCreated === true) return 'maybe-created';
  if (e?.kind === 'rejected' || e?.kind === 'invalid-request') return 'refused';
  if (e?.kind === 'unavailable' || e?.kind === 'credentials') return 'not-sent';
  // Anything else (an answer of a shape not understood): it may exist.
  return 'maybe-created';
}

/** Why the call did not start a step: definitely not, maybe, or started but not recorded. */
async function notStarted(
  deps: StepStarterDeps,
  due: ClaimedStep,
  error: unknown,
): Promise<StepOutcome> {
  const { claim } = due;
  const log = { chain: due.chain.id, step: claim.position, error: String(error) };
  const failure = startFailure(error);
  if (failure === 'refused') {
    deps.logger.warn(log, 'step not started: the service refused it');
    await deps.chains.failed(claim, null, deps.now());
    return 'failed';
  }
  if (failure === 'not-sent') {
    // Nothing reached the service: the step is due again, for the next pass (or replica).
    deps.logger.warn(log, 'step not started now; tried again on the next pass');
    await deps.chains.release(claim);
    return 'retried';
  }
  deps.logger.warn(log, 'step may have started: the requester is asked to look');
  await deps.chains.uncertain(claim, deps.now());
  return 'uncertain';
}
