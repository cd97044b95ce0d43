import type {
  AllMiddlewareArgs,
  App,
  SlackViewMiddlewareArgs,
  ViewResponseAction,
  ViewSubmitAction,
} from '@slack/bolt';
import {
  checkTemplateDraft,
  type TemplateDraft,
  type TemplateField,
  type TemplateProblem,
  type TemplateWrite,
} from '../../../approvals/request-templates.ts';
import { checkApprover } from '../../../approvals/service-directory.ts';
import { parseStepRules } from '../../../approvals/steps.ts';
import { settleWithin } from '../../../settle-within.ts';
import { buildMessageModal } from '../../blocks/approval-modal.ts';
import { parseTemplatesMetadata, type TemplatesMetadata } from '../../blocks/templates-modal.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../../ids.ts';
import type { SlackPerson } from '../../people/slack-people.ts';
import type { SlackDeps } from '../../slack-deps.ts';
import { templateRefusal, templatesView } from '../../templates/template-manager.ts';

type Deps = Pick<
  SlackDeps,
  'templates' | 'people' | 'identities' | 'service' | 'access' | 'logger' | 'now'
>;
type Args = SlackViewMiddlewareArgs<ViewSubmitAction> & AllMiddlewareArgs;

const FIELD_BLOCKS: Record<TemplateField, string> = {
  name: BLOCK.templateName,
  titlePrefix: BLOCK.templatePrefix,
  noteSkeleton: BLOCK.templateSkeleton,
};

const fieldErrors = (
  problems: Partial<Record<TemplateField, TemplateProblem>>,
  t: Messages,
): Record<string, string> =>
  Object.fromEntries(
    Object.entries(problems).map(([field, problem]) => [
      FIELD_BLOCKS[field as TemplateField],
      t.templateProblem(problem),
    ]),
  );

/**
 * How long a save waits for the membership check and the approver's bot check before answering:
 * Slack closes the modal (and the typed text with it) when the answer takes 3 s.
 */
export const SAVE_CHECK_WAIT_MS = 1500;

/**
 * Saving the template editor: the person must still be in the channel (checked now, whatever the
 * modal says), the fields within their limits, the name free in the channel and the channel
 * under its limit; problems go back as field errors and nothing is stored. Saved, the modal shows
 * the channel's templates again. The checks that ask Slack get SAVE_CHECK_WAIT_MS: past it the
 * editor stays open with a field error asking to save again, nothing is written, and the lookup
 * goes on warming the shared member list, so the next Save is answered at once.
 */
export function templateSubmission(deps: Deps) {
  return async ({ ack, body, view, context }: Args): Promise<void> => {
    const metadata = parseTemplatesMetadata(view.private_metadata);
    if (!metadata) return ack();
    const userId = body.user.id;
    const t = messagesFor(metadata.locale);
    const values = view.state.values;
    const approverChatId =
      values[BLOCK.templateApprover]?.[ACTION.templateApprover]?.selected_user ?? null;
    const { verdict, approver, unknownLogin } = await lookUp(deps, {
      channelId: metadata.channelId,
      userId,
      botUserId: context.botUserId,
      approverChatId,
    });
    const refused = refusalOf(verdict, metadata.channelId, t, deps.access.templateManagers);
    if (refused) return ack(refused);
    const steps = parseStepRules(values[BLOCK.templateSteps]?.[ACTION.templateSteps]?.value ?? '');
    if (!steps.ok)
      return ack({
        response_action: 'errors',
        errors: { [BLOCK.templateSteps]: t.templateStepsProblem(steps.problem) },
      });
    const checked = checkTemplateDraft({
      ...draftOf(values, approverChatId),
      laterSteps: steps.rules,
    });
    if (!checked.ok)
      return ack({ response_action: 'errors', errors: fieldErrors(checked.problems, t) });
    const approverError = approverProblem(approver, unknownLogin, t);
    if (approverError)
      return ack({
        response_action: 'errors',
        errors: { [BLOCK.templateApprover]: approverError },
      });
    const written = await save(deps, metadata, checked.draft, userId);
    if (!written.ok)
      return ack({
        response_action: 'errors',
        errors: fieldErrors({ [written.field]: written.problem }, t),
      });
    deps.logger.info(
      { channel: metadata.channelId, template: written.template.id, user: userId },
      metadata.templateId ? 'template edited' : 'template added',
    );
    await ack({
      response_action: 'update',
      view: await templatesView(deps, metadata.channelId, userId),
    });
  };
}

/**
 * What saving asks Slack and the service, each undefined when not known within
 * SAVE_CHECK_WAIT_MS. The channel in the metadata is a claim: the verdict is about that channel,
 * for this person.
 */
async function lookUp(
  deps: Deps,
  asked: {
    channelId: string;
    userId: string;
    botUserId: string | undefined;
    approverChatId: string | null;
  },
) {
  const { approverChatId } = asked;
  const [verdict, approver, unknownLogin] = await Promise.all([
    settleWithin(
      deps.access.templates(asked.channelId, asked.userId, asked.botUserId),
      SAVE_CHECK_WAIT_MS,
    ),
    // A person Slack cannot describe now is checked on the next Save, like a slow one.
    approverChatId
      ? settleWithin(
          deps.people.get(approverChatId).catch(() => undefined),
          SAVE_CHECK_WAIT_MS,
        )
      : null,
    // Every request from the template would go to them: the service must know them. A slow or
    // failed lookup saves (the form checks again when the template is used).
    approverChatId
      ? settleWithin(unknownToService(deps, approverChatId), SAVE_CHECK_WAIT_MS)
      : undefined,
  ]);
  return { verdict, approver, unknownLogin };
}

/**
 * What the editor answers when the person may not save here: still checking (past the wait) or
 * unsure (Slack could not say), as a field error that keeps what was typed; refused, the reason.
 * Undefined when they may save.
 */
function refusalOf(
  verdict: Awaited<ReturnType<Deps['access']['templates']>> | undefined,
  channelId: string,
  t: Messages,
  managers: Deps['access']['templateManagers'],
): ViewResponseAction | undefined {
  if (verdict === undefined)
    return { response_action: 'errors', errors: { [BLOCK.templateName]: t.templateStillChecking } };
  if (verdict === 'unsure')
    return { response_action: 'errors', errors: { [BLOCK.templateName]: t.templatesUnsure } };
  if (verdict === 'allowed') return undefined;
  const refusal = templateRefusal(verdict, channelId, t, managers);
  return { response_action: 'update', view: buildMessageModal([refusal], t, t.templatesTitle) };
}

/**
 * Why the template's approver cannot be saved: not described by Slack within the wait (checked on
 * the next Save), a bot, deactivated (every request from it would go to someone Slack cannot
 * reach), or unknown to the service. Undefined when there is no approver or nothing is wrong.
 */
function approverProblem(
  approver: SlackPerson | null | undefined,
  unknownLogin: string | undefined,
  t: Messages,
): string | undefined {
  if (approver === undefined) return t.templateApproverStillChecking;
  if (approver?.isBot) return t.approverIsBot;
  if (approver?.presence.deactivated) return t.templateApproverDeactivated(approver.name);
  if (unknownLogin) return t.approverUnknownToService(unknownLogin);
  return undefined;
}

/** The editor's fields as typed. */
function draftOf(values: Args['view']['state']['values'], approverChatId: string | null) {
  const typed = (block: string, action: string) => values[block]?.[action]?.value ?? '';
  return {
    name: typed(BLOCK.templateName, ACTION.templateName),
    titlePrefix: typed(BLOCK.templatePrefix, ACTION.templatePrefix),
    noteSkeleton: typed(BLOCK.templateSkeleton, ACTION.templateSkeleton),
    approverChatId,
  };
}

/** Adds the template, or updates the one edited when it is still the channel's. */
async function save(
  deps: Deps,
  metadata: TemplatesMetadata,
  draft: TemplateDraft,
  userId: string,
): Promise<TemplateWrite> {
  const now = deps.now();
  if (!metadata.templateId) return deps.templates.add(metadata.channelId, draft, userId, now);
  const id = await ownTemplate(deps, metadata.templateId, metadata.channelId);
  return id
    ? deps.templates.update(id, draft, userId, now)
    : ({ ok: false, field: 'name', problem: { code: 'gone' } } as const);
}

/** The template's id when it is one of the channel's (the editor's metadata is only a claim). */
async function ownTemplate(
  deps: Pick<Deps, 'templates'>,
  id: string,
  channelId: string,
): Promise<string | undefined> {
  const template = await deps.templates.get(id);
  return template && template.channelId === channelId ? template.id : undefined;
}

export function registerTemplateView(app: App, deps: Deps): void {
  app.view(CALLBACK.templateEditor, templateSubmission(deps));
}

/** The approver's login when the approval service's directory does not know it, else undefined. */
async function unknownToService(
  deps: Pick<Deps, 'identities' | 'service'>,
  chatId: string,
): Promise<string | undefined> {
  const login = await deps.identities.loginOf(chatId).catch(() => null);
  if (!login) return undefined;
  return (await checkApprover(deps.service, login)) === 'unknown' ? login : undefined;
}
