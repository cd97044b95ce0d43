import { type AttemptClock, NOTHING_POSTED } from '../../../approvals/announcer.ts';
import { stepOutcome } from '../../../approvals/step-outcome.ts';
import type { TrackedApproval } from '../../../approvals/tracked-approval.ts';
import { messagesIn } from '../../i18n.ts';
import type { DeliveryKit } from '../delivery-kit.ts';
import { call, classOf } from '../slack-call.ts';
import type { Handler } from './handler.ts';

/**
 * Ends the Workflow Builder step that started the approval with its outcome. Called with the
 * app's bot token: the step's own token from function_executed lives only while the step's event
 * is handled, and an approval takes days.
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
  const outcome = stepOutcome(approval);
  if (!outcome.ok) {
    const t = messagesIn(kit.options.channelLanguage);
    await call('functions.completeError', () =>
      client.functions.completeError({
        function_execution_id: id,
        error: t.stepFailed(outcome.reason, approval.djbh, kit.options.giveUpAfterDays),
      }),
    );
    return;
  }
  const decidedBy = outcome.decidedByLogin
    ? await kit.readers
        .slackUserOf(attempt, approval, outcome.decidedByLogin)
        .catch((error: unknown) => {
          if (classOf(error) === 'pause') throw error;
          return null;
        })
    : null;
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
      },
    }),
  );
}
