import { type DraftField, prepareApproval } from '../../approvals/approval-request.ts';
import { suggestApproverFor } from '../../approvals/approver-suggestion.ts';
import {
  NotSavedError,
  StoppingError,
  startTrackedApproval,
} from '../../approvals/start-approval.ts';
import { shownDigest } from '../../approvals/step-confirmation.ts';
import type { StepRule } from '../../approvals/steps.ts';
import type { Messages } from '../i18n.ts';
import type { SlackPerson } from '../people/slack-people.ts';
import { resolveApprover } from '../requests/approver-choice.ts';
import { explain } from '../requests/submission-outcome.ts';
import type { StartingDeps } from '../slack-deps.ts';

/** What a Workflow Builder step asks to start, from its inputs. */
export interface StepRequest {
  executionId: string;
  teamId: string;
  /** The Slack user the approval is started for. */
  requester: string;
  approver: string | null;
  title: string;
  note: string;
  channel: string | null;
  /**
   * The digest of the title and note the requester was shown (step-confirmation.ts): only text
   * with this digest starts. Absent when nobody was shown anything (no confirmation).
   */
  shownDigest?: string | null;
  /** The steps after the first (workflow-steps.ts): the request runs in several steps. */
  laterSteps?: readonly StepRule[];
}

/**
 * Starts a step's approval through the one start flow (startTrackedApproval), in the name of
 * `requester`, whom the caller has established ran the workflow or confirmed it. Returns why it
 * could not (in the requester's words), or undefined once it started. Throws StoppingError when
 * this replica is stopping and started nothing: the caller hands the Start on, since a workflow
 * run cannot be submitted again.
 */
export async function startForStep(
  deps: StartingDeps,
  request: StepRequest,
  requester: SlackPerson,
  t: Messages,
): Promise<string | undefined> {
  const requesterLogin = await deps.identities.loginOf(request.requester);
  if (!requesterLogin) return t.requesterUnknown;
  const approver = request.approver
    ? await resolveApprover(deps, request.approver, undefined, { channelId: '', locale: '' }, t)
    : await suggested(deps, requesterLogin, t);
  if ('error' in approver) return approver.error;
  const prepared = prepareApproval(
    { title: request.title, note: request.note, approverLogin: approver.login },
    requesterLogin,
    deps.textLimits,
  );
  if (
    request.shownDigest !== undefined &&
    prepared.ok &&
    shownDigest(prepared.input.title, prepared.input.note) !== request.shownDigest
  )
    return t.confirmNotAsShown;
  if (!prepared.ok) {
    return Object.entries(prepared.problems)
      .map(
        ([field, problem]) =>
          `${label(field as DraftField, t)}: ${t.problem(field as DraftField, problem)}`,
      )
      .join(' ');
  }
  try {
    const { djbh } = await startTrackedApproval(deps, {
      input: prepared.input,
      teamId: request.teamId,
      channelId: request.channel || request.requester,
      functionExecutionId: request.executionId,
      requesterSlackId: request.requester,
      approverSlackId: approver.slackId ?? null,
      locale: requester.locale,
      // In several steps: the workflow step completes when the last one ends (chain-store.ts).
      ...(request.laterSteps?.length ? { chain: { laterSteps: request.laterSteps } } : {}),
    });
    deps.logger.info(
      { djbh, executionId: request.executionId },
      'approval started by a workflow step',
    );
    return undefined;
  } catch (error) {
    if (error instanceof StoppingError) throw error;
    if (error instanceof NotSavedError) {
      deps.logger.error({ err: error.cause, djbh: error.djbh }, 'approval started but not stored');
      return t.notSaved(error.djbh);
    }
    return explain(error, t, deps.webUrl);
  }
}

/** No approver given: the requester's nearest leader, as the form would preselect. */
async function suggested(
  deps: StartingDeps,
  requesterLogin: string,
  t: Messages,
): Promise<{ login: string; slackId?: string } | { error: string }> {
  const s = await suggestApproverFor(
    {
      service: deps.service,
      findChatUser: (login) => deps.identities.slackUserOf(login),
      // A leader's delegate while away, as the form would preselect.
      delegations: deps.delegations,
      now: deps.now,
    },
    requesterLogin,
  );
  switch (s.kind) {
    case 'suggested':
      return { login: s.approverLogin, slackId: s.approverChatId };
    case 'leader-not-in-chat':
      return { login: s.approverLogin };
    case 'no-leader':
      return { error: t.stepNoApprover(t.noLeader) };
    case 'unknown-person':
      return { error: t.stepNoApprover(t.unknownPerson(requesterLogin)) };
    case 'lookup-failed':
      return { error: t.stepNoApprover(t.lookupFailed) };
  }
}

function label(field: DraftField, t: Messages): string {
  return { title: t.titleLabel, note: t.noteLabel, approver: t.approverLabel }[field];
}
