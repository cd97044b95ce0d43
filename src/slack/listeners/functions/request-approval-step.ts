import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import { z } from 'zod';
import { suggestApproverFor } from '../../../approvals/approver-suggestion.ts';
import type { NewStepConfirmation } from '../../../approvals/step-confirmation.ts';
import { mayConfirmInPlace, shownDigest, startText } from '../../../approvals/step-confirmation.ts';
import type { StepRule } from '../../../approvals/steps.ts';
import { stepSubmissionKey } from '../../../approvals/submission-guard.ts';
import {
  type LaterStepsProblem,
  parseLaterSteps,
  resolveLaterSteps,
} from '../../../approvals/workflow-steps.ts';
import { describe } from '../../../errors.ts';
import { confirmationFits } from '../../blocks/confirmation-message.ts';
import { messagesFor } from '../../i18n.ts';
import { CALLBACK } from '../../ids.ts';
import { delegateOf, suggestionDeps } from '../../requests/approval-form.ts';
import type { SlackDeps, StartingDeps } from '../../slack-deps.ts';

type Deps = StartingDeps & Pick<SlackDeps, 'confirmer'>;
type Args = SlackEventMiddlewareArgs<'function_executed'> & AllMiddlewareArgs;

/** The step's inputs as manifest.yml declares them; Workflow Builder fills them in. */
const Inputs = z.object({
  requester: z.string().min(1),
  approver: z.string().nullish(),
  title: z.string(),
  note: z.string(),
  channel: z.string().nullish(),
  // The steps after the first, as a workflow author types them (approvals/workflow-steps.ts).
  later_steps: z.string().nullish(),
  // `{{data.interactivity}}` of a workflow a person started: Slack names who it was, and gives a
  // short-lived pointer that opens one view for them. Its secret is not read.
  interactivity: z
    .object({
      interactor: z.object({ id: z.string().min(1) }).nullish(),
      interactivity_pointer: z.string().min(1).nullish(),
    })
    .nullish()
    .catch(null),
});

/**
 * The Workflow Builder step "Request approval": starts the approval and posts it like /approve
 * does; the step stays running until the approval ends, and the outbox completes it then
 * (announcement kind `step-complete`). What stops it from starting ends the step with an error
 * saying why, so the workflow can branch on it.
 *
 * Nothing is started before the requester has seen what will start and said Start. When they ran
 * the workflow themselves, they are asked in a modal right away (views/step-confirmation-modal.ts);
 * otherwise, or when the modal cannot be opened, in a DM
 * (listeners/actions/step-confirmation-actions.ts). The step waits for their answer.
 *
 * With later steps (`later_steps`, approvals/workflow-steps.ts) the request runs in several steps
 * as a template's does, and the step completes once the last one ends (store/chain-store.ts);
 * steps the app cannot use end the run at once, saying which.
 */
export function requestApprovalStep(deps: Deps) {
  return async ({ ack, event, fail, body, client }: Args): Promise<void> => {
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
      .take(stepSubmissionKey(executionId), deps.now())
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
    // Nothing started: the run ends with words, and the same run may be tried again.
    const endRun = async (error: string) => {
      await deps.submissions.release(stepSubmissionKey(executionId)).catch(() => undefined);
      await fail({ error });
    };
    // Slack could not say who the requester is: nobody can be asked, so nothing can start.
    if (!requester) return endRun(t.somethingWrong);
    // Shown as it will start, and started only as it was shown (the digest is checked at Start).
    const title = startText(inputs.title);
    const note = startText(inputs.note);
    const later = await whatMayStart(deps, { title, note, laterSteps: inputs.later_steps }, t);
    if (!later.ok) return endRun(later.error);
    const confirmation = await confirmationOf(deps, {
      executionId,
      teamId: body.team_id ?? '',
      inputs,
      shown: { title, note },
      laterSteps: later.rules,
      timeZone: requester.timeZone,
      locale: requester.locale,
    });
    // The question could not even be recorded (the database): nothing waits, so end the run.
    if (!(await ask(deps, confirmation, inputs, client))) {
      deps.logger.warn({ executionId }, 'could not record the confirmation of a workflow step');
      return endRun(t.somethingWrong);
    }
    deps.logger.info({ executionId }, 'workflow step waits for its requester to confirm');
  };
}

/**
 * Whether what would start can be asked about: the title and note shown whole (never a cut text
 * confirmed as whole), and the later steps usable; why not, in the requester's words.
 */
async function whatMayStart(
  deps: StartingDeps,
  step: { title: string; note: string; laterSteps: string | null | undefined },
  t: ReturnType<typeof messagesFor>,
): Promise<{ ok: true; rules: StepRule[] } | { ok: false; error: string }> {
  if (!confirmationFits(step.title, step.note)) return { ok: false, error: t.stepTooLongToShow };
  const later = await laterSteps(deps, step.laterSteps ?? '');
  return later.ok ? later : { ok: false, error: t.laterStepsProblem(later.problem) };
}

/**
 * The step's later steps, each Slack user by their login and each login one the service knows;
 * the leader rules are resolved as each step starts (step-starter.ts), with any delegate then.
 */
async function laterSteps(
  deps: StartingDeps,
  typed: string,
): Promise<{ ok: true; rules: StepRule[] } | { ok: false; problem: LaterStepsProblem }> {
  const parsed = parseLaterSteps(typed);
  if (!parsed.ok) return parsed;
  return resolveLaterSteps(parsed.steps, {
    loginOf: (chatId) => deps.identities.loginOf(chatId),
    service: deps.service,
  });
}

/**
 * The approver the requester confirms: the step's own, or their delegate while away (a workflow
 * naming someone who set one); with none, the nearest leader (or theirs).
 */
async function stepApprover(
  deps: StartingDeps,
  requester: string,
  approver: string | null,
  timeZone: string | undefined,
): Promise<Pick<NewStepConfirmation, 'approverChatId' | 'approverDelegatedBy'>> {
  if (!approver) return nearestLeader(deps, requester, timeZone);
  const requesterLogin = () => deps.identities.loginOf(requester).catch(() => null);
  const delegate = await delegateOf(deps, approver, requesterLogin);
  if (!delegate) return { approverChatId: approver };
  return {
    approverChatId: delegate.chatId,
    approverDelegatedBy: { chatId: approver, until: delegate.until, timeZone },
  };
}

/**
 * Asks the requester, in place when they ran the workflow themselves, else in a DM; not in their
 * name until they say so: the step waits for their answer. False when the question could not be
 * recorded.
 */
async function ask(
  deps: Deps,
  confirmation: NewStepConfirmation,
  inputs: z.infer<typeof Inputs>,
  client: Args['client'],
): Promise<boolean> {
  const interactor = inputs.interactivity?.interactor?.id ?? null;
  const pointer = inputs.interactivity?.interactivity_pointer ?? null;
  const asked =
    pointer && mayConfirmInPlace(inputs.requester, interactor)
      ? deps.confirmer.askInPlace(confirmation, pointer, client)
      : deps.confirmer.ask(confirmation);
  return (await asked.catch(() => undefined)) !== undefined;
}

/** The question the requester is asked: what will start in their name, and until when. */
async function confirmationOf(
  deps: Deps,
  step: {
    executionId: string;
    teamId: string;
    inputs: z.infer<typeof Inputs>;
    shown: { title: string; note: string };
    laterSteps: StepRule[];
    locale: string;
    timeZone: string | undefined;
  },
): Promise<NewStepConfirmation> {
  const { inputs, shown } = step;
  const now = deps.now();
  return {
    executionId: step.executionId,
    teamId: step.teamId,
    title: shown.title,
    note: shown.note,
    shownDigest: shownDigest(shown.title, shown.note),
    requesterChatId: inputs.requester,
    startedByChatId: inputs.interactivity?.interactor?.id ?? null,
    ...(await stepApprover(deps, inputs.requester, inputs.approver || null, step.timeZone)),
    channelId: inputs.channel || null,
    ...(step.laterSteps.length > 0 ? { laterSteps: step.laterSteps } : {}),
    locale: step.locale,
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.confirmer.minutes * 60_000),
  };
}

/**
 * The approver a step without one gets: the requester's nearest leader who is not away, as the
 * form would preselect. Named in the confirmation, and the one Start uses, so the requester
 * confirms a person, not "your nearest leader"; null when there is none on Slack (Start then says
 * why it cannot start).
 */
async function nearestLeader(
  deps: StartingDeps,
  requester: string,
  timeZone: string | undefined,
): Promise<Pick<NewStepConfirmation, 'approverChatId' | 'approverDelegatedBy'>> {
  const login = await deps.identities.loginOf(requester).catch(() => null);
  if (!login) return { approverChatId: null };
  const s = await suggestApproverFor(suggestionDeps(deps), login);
  if (s.kind !== 'suggested') return { approverChatId: null };
  // The leader's delegate while away: said beside them, naming the leader as Slack knows them.
  const from = s.delegatedBy
    ? await deps.identities.slackUserOf(s.delegatedBy.login).catch(() => null)
    : null;
  return {
    approverChatId: s.approverChatId,
    ...(from && s.delegatedBy
      ? { approverDelegatedBy: { chatId: from, until: s.delegatedBy.until, timeZone } }
      : {}),
  };
}

export function registerFunctions(app: App, deps: Deps): void {
  app.function(CALLBACK.workflowStep, { autoAcknowledge: false }, requestApprovalStep(deps));
}
