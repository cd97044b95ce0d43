import {
  type DraftField,
  type DraftProblem,
  type PreparedApproval,
  prepareApproval,
} from '../../approvals/approval-request.ts';
import { type RequestTemplate, templateOverLimits } from '../../approvals/request-templates.ts';
import type { StepRule } from '../../approvals/steps.ts';
import { type Messages, messagesFor } from '../i18n.ts';
import { BLOCK, isDirectMessage, isUserId } from '../ids.ts';
import type { SlackPerson } from '../people/slack-people.ts';
import type { StartingDeps } from '../slack-deps.ts';
import { resolveApprover } from './approver-choice.ts';
import type { SubmittedForm } from './submitted-form.ts';

/*
 * Everything about a submitted request form that can be decided before Slack's 3 s run out: who
 * asks, who approves, whether the draft is good, where it will be posted. Words, not views: the
 * listener renders the outcome.
 */

/** A draft ready to start, with what starting it needs. */
export interface ReadySubmission {
  as: 'ready';
  t: Messages;
  requester: SlackPerson;
  approver: { login?: string; slackId?: string };
  prepared: Extract<PreparedApproval, { ok: true }>;
  usedTemplate: { id: string; name: string; laterSteps?: StepRule[] } | null;
  /**
   * Request again asked for the old request's channel, which the requester has left: it goes to
   * their DM instead (its members would read the request).
   */
  left: boolean;
}

export type SubmissionCheck =
  /** Nothing to fix in the form: the modal says why it cannot go on. */
  | { as: 'message'; t: Messages; line: string }
  /** Field problems, by block id. */
  | { as: 'field-errors'; errors: Record<string, string> }
  | ReadySubmission;

export async function checkSubmission(
  deps: StartingDeps,
  form: SubmittedForm,
): Promise<SubmissionCheck> {
  const { metadata, blockOf } = form;
  const requester = await deps.people.get(form.userId);
  const t = messagesFor(requester.locale);
  const requesterLogin = await deps.identities.loginOf(form.userId);
  if (!requesterLogin) return { as: 'message', t, line: t.requesterUnknown };
  if (metadata.againOf) {
    // Two forms opened from one button: only the first submitted requests it again.
    const old = await deps.store.getApproval(metadata.againOf.djbh);
    if (old?.request.requestedAgainAs)
      return { as: 'message', t, line: t.alreadyRequestedAgain(old.request.requestedAgainAs.djbh) };
  }
  const approver = await resolveApprover(deps, form.approverSlackId, form.typedLogin, metadata, t);
  if ('error' in approver) {
    const block = approver.block === BLOCK.approver ? blockOf('approver') : approver.block;
    return { as: 'field-errors', errors: { [block]: approver.error } };
  }
  const prepared = prepareApproval(
    { title: form.title, note: form.note, approverLogin: approver.login },
    requesterLogin,
    deps.textLimits,
  );
  const template = await templateOf(deps, form.templateId, metadata.channelId);
  if (!prepared.ok)
    return { as: 'field-errors', errors: draftErrors(prepared.problems, template, blockOf, t) };
  const usedTemplate = template
    ? {
        id: template.id,
        name: template.name,
        ...(template.laterSteps?.length ? { laterSteps: template.laterSteps } : {}),
      }
    : null;
  return {
    as: 'ready',
    t,
    requester,
    approver,
    prepared,
    usedTemplate,
    left: await left(deps, form),
  };
}

/**
 * Request again names the old request's channel, not one the person asks from now: it is used
 * only if they are in it now (its members would read the request), else their DM.
 */
async function left(deps: Pick<StartingDeps, 'access'>, form: SubmittedForm): Promise<boolean> {
  const { channelId } = form;
  if (!form.metadata.againOf || isDirectMessage(channelId) || isUserId(channelId)) return false;
  return (await deps.access.postRequestIn(channelId, form.userId)) !== 'allowed';
}

/**
 * The template the form was filled from, when the pick names a template of the channel the form
 * was opened in (the pick's id is only a claim). A removed template still counts: it was picked
 * while it was offered.
 */
async function templateOf(
  deps: Pick<StartingDeps, 'templates'>,
  templateId: string | undefined,
  channelId: string,
): Promise<RequestTemplate | undefined> {
  if (!templateId || !channelId) return undefined;
  const template = await deps.templates.get(templateId);
  return template && template.channelId === channelId ? template : undefined;
}

/**
 * The field errors of a draft; a title or note too long because of the template's part (one saved
 * before its parts were counted as sent) names the template, which is what the person can change.
 */
function draftErrors(
  problems: Partial<Record<DraftField, DraftProblem>>,
  template: RequestTemplate | undefined,
  blockOf: (field: DraftField) => string,
  t: Messages,
): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const [field, problem] of Object.entries(problems))
    errors[blockOf(field as DraftField)] = t.problem(field as DraftField, problem);
  const over = template ? templateOverLimits(template) : {};
  for (const [field, part] of [
    ['title', 'titlePrefix'],
    ['note', 'noteSkeleton'],
  ] as const) {
    const problem = over[part];
    if (template && problems[field]?.code === 'too-long' && problem?.code === 'too-long')
      errors[blockOf(field)] = t.templateMakesTooLong(template.name, field, part, problem);
  }
  return errors;
}
