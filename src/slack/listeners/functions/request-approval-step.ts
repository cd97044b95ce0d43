import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { type DraftField, prepareApproval } from '../../../approvals/approval-request.ts';
import { suggestApproverFor } from '../../../approvals/approver-suggestion.ts';
import { NotSavedError, startTrackedApproval } from '../../../approvals/start-approval.ts';
import { describe } from '../../../errors.ts';
import { resolveApprover } from '../../approver-choice.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { CALLBACK } from '../../ids.ts';
import type { StartingDeps } from '../../slack-deps.ts';
import type { SlackPerson } from '../../slack-people.ts';
import { explain } from '../../submission-outcome.ts';

type Deps = StartingDeps;
type Args = SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs;

/** The step's inputs as manifest.yml declares them; Workflow Builder fills them in. */
const Inputs = z.object({
  requester: z.string().min(1),
  approver: z.string().nullish(),
  title: z.string(),
  note: z.string(),
  channel: z.string().nullish(),
});

/**
 * The Workflow Builder step "Request approval": starts the approval and posts it like /approve
 * does; the step stays running until the approval ends, and the outbox completes it then
 * (announcement kind `step-complete`). What stops it from starting ends the step with an error
 * saying why, so the workflow can branch on it.
 */
export function requestApprovalStep(deps: Deps) {
  return async ({ ack, event, fail, body }: Args): Promise<void> => {
    // Slack waits 3 s for this event's answer; the approval may take longer to start.
    await ack();
    const executionId = event.function_execution_id;
    const parsed = Inputs.safeParse(event.inputs);
    if (!parsed.success) {
      await fail({ error: `The step's inputs are not usable: ${parsed.error.issues[0]?.message}` });
      return;
    }
    const inputs = parsed.data;
    // Slack may send the event again (a retry, or to another replica): one approval per run.
    const taken = await deps.submissions
      .take(`step:${executionId}`, deps.now())
      .catch((error: unknown) => {
        deps.logger.warn({ error: describe(error), executionId }, 'replay guard unavailable');
        return undefined;
      });
    if (taken === false) return;
    const requester = await deps.people.get(inputs.requester).catch(() => undefined);
    const t = messagesFor(requester?.locale);
    if (taken === undefined) {
      await fail({ error: t.somethingWrong });
      return;
    }
    // Slack could not say who the requester is: nothing can start.
    const refusal = requester
      ? await start(deps, inputs, requester, executionId, body.team_id ?? '', t).catch(
          (error: unknown) => {
            deps.logger.warn({ error: describe(error), executionId }, 'workflow step failed');
            return t.somethingWrong;
          },
        )
      : t.somethingWrong;
    if (refusal === undefined) {
      deps.dispatcher.wake();
      return;
    }
    // Nothing started: a new run of the workflow may try again.
    await deps.submissions.release(`step:${executionId}`).catch(() => undefined);
    await fail({ error: refusal });
  };
}

/** Starts the approval; returns why it could not (in the requester's words), or undefined. */
async function start(
  deps: Deps,
  inputs: z.infer<typeof Inputs>,
  requester: SlackPerson,
  executionId: string,
  teamId: string,
  t: Messages,
): Promise<string | undefined> {
  const requesterLogin = await deps.identities.loginOf(inputs.requester);
  if (!requesterLogin) return t.requesterUnknown;
  const approver = inputs.approver
    ? await resolveApprover(deps, inputs.approver, undefined, { channelId: '', locale: '' }, t)
    : await suggested(deps, requesterLogin, t);
  if ('error' in approver) return approver.error;
  const prepared = prepareApproval(
    { title: inputs.title, note: inputs.note, approverLogin: approver.login },
    requesterLogin,
    deps.textLimits,
  );
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
      teamId,
      channelId: inputs.channel || inputs.requester,
      functionExecutionId: executionId,
      requesterSlackId: inputs.requester,
      approverSlackId: approver.slackId ?? null,
      locale: requester.locale,
    });
    deps.logger.info({ djbh, executionId }, 'approval started by a workflow step');
    return undefined;
  } catch (error) {
    if (error instanceof NotSavedError) {
      deps.logger.error({ err: error.cause, djbh: error.djbh }, 'approval started but not stored');
      return t.notSaved(error.djbh);
    }
    return explain(error, t, deps.webUrl);
  }
}

/** No approver given: the requester's nearest leader, as the form would preselect. */
async function suggested(
  deps: Deps,
  requesterLogin: string,
  t: Messages,
): Promise<{ login: string; slackId?: string } | { error: string }> {
  const s = await suggestApproverFor(
    { service: deps.service, findChatUser: (login) => deps.identities.slackUserOf(login) },
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

export function registerFunctions(app: App, deps: Deps): void {
  app.function(CALLBACK.workflowStep, { autoAcknowledge: false }, requestApprovalStep(deps));
}
