import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { runByRequester } from '../../../approvals/step-confirmation.ts';
import { describe } from '../../../errors.ts';
import { messagesFor } from '../../i18n.ts';
import { CALLBACK } from '../../ids.ts';
import type { SlackDeps, StartingDeps } from '../../slack-deps.ts';
import { type StepRequest, startForStep } from '../../step-start.ts';

type Deps = StartingDeps & Pick<SlackDeps, 'confirmer'>;
type Args = SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs;

/** The step's inputs as manifest.yml declares them; Workflow Builder fills them in. */
const Inputs = z.object({
  requester: z.string().min(1),
  approver: z.string().nullish(),
  title: z.string(),
  note: z.string(),
  channel: z.string().nullish(),
  // `{{data.interactivity}}` of a workflow a person started: Slack names who it was. Its secret
  // and pointer are not read.
  interactivity: z
    .object({ interactor: z.object({ id: z.string().min(1) }).nullish() })
    .nullish()
    .catch(null),
});

/**
 * The Workflow Builder step "Request approval": starts the approval and posts it like /approve
 * does; the step stays running until the approval ends, and the outbox completes it then
 * (announcement kind `step-complete`). What stops it from starting ends the step with an error
 * saying why, so the workflow can branch on it.
 *
 * The approval is started at once only when the requester is the person who ran the workflow;
 * otherwise the requester is asked to confirm in a DM, and the step waits for their answer
 * (listeners/actions/step-confirmation-actions.ts).
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
    const request: StepRequest = {
      executionId,
      teamId: body.team_id ?? '',
      requester: inputs.requester,
      approver: inputs.approver || null,
      title: inputs.title,
      note: inputs.note,
      channel: inputs.channel || null,
    };
    const startedBy = inputs.interactivity?.interactor?.id ?? null;
    if (requester && !runByRequester(inputs.requester, startedBy)) {
      // Not in their name until they say so: the step waits for their answer.
      const now = deps.now();
      const asked = deps.confirmer.ask({
        executionId,
        teamId: request.teamId,
        title: request.title,
        note: request.note,
        requesterChatId: request.requester,
        startedByChatId: startedBy,
        approverChatId: request.approver,
        channelId: request.channel,
        locale: requester.locale,
        createdAt: now,
        expiresAt: new Date(now.getTime() + deps.confirmer.minutes * 60_000),
      });
      // The question could not even be recorded (the database): nothing waits, so end the run.
      if ((await asked.catch(() => undefined)) === undefined) {
        deps.logger.warn({ executionId }, 'could not record the confirmation of a workflow step');
        await deps.submissions.release(`step:${executionId}`).catch(() => undefined);
        await fail({ error: t.somethingWrong });
        return;
      }
      deps.logger.info({ executionId }, 'workflow step waits for its requester to confirm');
      return;
    }
    // Slack could not say who the requester is: nothing can start.
    const refusal = requester
      ? await startForStep(deps, request, requester, t).catch((error: unknown) => {
          deps.logger.warn({ error: describe(error), executionId }, 'workflow step failed');
          return t.somethingWrong;
        })
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

export function registerFunctions(app: App, deps: Deps): void {
  app.function(CALLBACK.workflowStep, { autoAcknowledge: false }, requestApprovalStep(deps));
}
