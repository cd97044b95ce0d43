import { type AttemptClock, NOTHING_POSTED } from '../../../approvals/announcer.ts';
import {
  chainStepOutcome,
  type StepOutcome,
  stepOutcome,
} from '../../../approvals/step-outcome.ts';
import type { ChainStep } from '../../../approvals/steps.ts';
import type { TrackedApproval } from '../../../approvals/tracked-approval.ts';
import { messagesIn } from '../../i18n.ts';
import type { DeliveryKit } from '../delivery-kit.ts';
import { call, classOf } from '../slack-call.ts';
import type { Handler } from './handler.ts';

/**
 * Ends the Workflow Builder step that started the approval with its outcome; for a request in
 * several steps (its later steps), the request's outcome once its last step ended, with each
 * step's decider (`step_deciders`). Called with the app's bot token: the step's own token from
 * function_executed lives only while the step's event is handled, and an approval takes days.
 */
export const deliverStepComplete: Handler = async (_a, approval, attempt, kit) => {
  const id = approval.slack.functionExecutionId;
  if (!id) return NOTHING_POSTED;
  attempt.check();
  try {
    await complete(id, approval, attempt, kit);
  } catch (error) {
    // Completed already: an earlier attempt got through although its answer was lost.
    if (classOf(error) === 'done') return NOTHING_POSTED;
    throw error;
  }
  return NOTHING_POSTED;
};

async function complete(
  id: string,
  approval: TrackedApproval,
  attempt: AttemptClock,
  kit: DeliveryKit,
): Promise<void> {
  const { client } = kit.options;
  const found = await kit.options.chainOf?.(approval.djbh);
  const chain = found?.chain ? { chain: found.chain, steps: found.steps } : undefined;
  const outcome = chain
    ? chainStepOutcome(approval, chain.chain, chain.steps)
    : stepOutcome(approval);
  // A request in several steps still going on: nothing is owed yet.
  if (!outcome) return;
  if (!outcome.ok) {
    await call('functions.completeError', () =>
      client.functions.completeError({
        function_execution_id: id,
        error: failure(outcome, approval, kit),
      }),
    );
    return;
  }
  const decidedBy = outcome.decidedByLogin
    ? await mentionOf(attempt, approval, kit, outcome.decidedByLogin)
    : null;
  const deciders = chain ? await stepDeciders(attempt, approval, kit, chain.steps) : undefined;
  // The lookup's catch must not let a call start past the attempt's deadline.
  attempt.check();
  await call('functions.completeSuccess', () =>
    client.functions.completeSuccess({
      function_execution_id: id,
      outputs: {
        approval_number: outcome.approvalNumber,
        decision: outcome.decision,
        decided_at: outcome.decidedAt,
        ...(decidedBy ? { decided_by: decidedBy } : {}),
        ...(deciders ? { step_deciders: deciders.join('\n') } : {}),
      },
    }),
  );
}

/** The error a workflow step ends with when its approval (or request) ended without an outcome. */
function failure(
  outcome: Extract<StepOutcome, { ok: false }>,
  approval: TrackedApproval,
  kit: DeliveryKit,
): string {
  const t = messagesIn(kit.options.channelLanguage);
  if (outcome.reason === 'step-failed') return t.stepChainFailed(outcome.position, approval.djbh);
  return t.stepFailed(outcome.reason, outcome.djbh ?? approval.djbh, kit.options.giveUpAfterDays);
}

/** The Slack user of a login, or null: a lookup that fails is not the step's failure. */
function mentionOf(
  attempt: AttemptClock,
  approval: TrackedApproval,
  kit: DeliveryKit,
  login: string,
): Promise<string | null> {
  return kit.readers.slackUserOf(attempt, approval, login).catch((error: unknown) => {
    if (classOf(error) === 'pause') throw error;
    return null;
  });
}

/**
 * Each step that was decided, skipped or could not start, a line each: its position, who (a
 * mention when they are on Slack, else their login), how, and its approval's number.
 */
async function stepDeciders(
  attempt: AttemptClock,
  approval: TrackedApproval,
  kit: DeliveryKit,
  steps: readonly ChainStep[],
): Promise<string[]> {
  const t = messagesIn(kit.options.channelLanguage);
  const lines: string[] = [];
  for (const step of steps) {
    if (step.state !== 'decided' && step.state !== 'skipped' && step.state !== 'failed') continue;
    const login = step.decidedBy ?? step.approverLogin;
    const user = login ? await mentionOf(attempt, approval, kit, login) : null;
    const who = user ? `<@${user}>` : (login ?? '—');
    const word = stepWord(step);
    const how = `${t.stepState[word] ?? word}${step.djbh ? ` (${step.djbh})` : ''}`;
    lines.push(t.stepDecider(step.position, who, how));
  }
  return lines;
}

/** How a step ended, in the words of `stepState`: a decision, stopped, skipped or failed. */
function stepWord(step: ChainStep): string {
  if (step.state !== 'decided') return step.state;
  return step.decision === 'approved' || step.decision === 'rejected' ? step.decision : 'stopped';
}
