import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  SlackActionMiddlewareArgs,
  StaticSelectAction,
} from '@slack/bolt';
import { applyTemplate, type RequestTemplate } from '../../../approvals/request-templates.ts';
import { logFailure } from '../../../logger.ts';
import {
  type ApprovalModalState,
  buildApprovalModal,
  fieldBlock,
  filledFormOf,
  type ModalMetadata,
} from '../../blocks/approval-modal.ts';
import { escapeMrkdwn } from '../../blocks/request-message.ts';
import { type Messages, messagesFor } from '../../i18n.ts';
import { ACTION, BLOCK } from '../../ids.ts';
import { templateApprover, templateOptions } from '../../requests/approval-form.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<
  SlackDeps,
  'people' | 'identities' | 'service' | 'logger' | 'now' | 'templates' | 'access' | 'delegations'
>;
type Args = SlackActionMiddlewareArgs<BlockAction<StaticSelectAction>> & AllMiddlewareArgs;
type Values = Record<
  string,
  Record<string, { value?: string | null; selected_user?: string | null } | undefined>
>;
type Block = { type: string; block_id?: string; elements?: Array<{ text?: string }> } & Record<
  string,
  unknown
>;

/**
 * A template picked in the request form: the form is drawn again with the template's title
 * prefix and note skeleton merged into what was typed (applyTemplate: the prefix goes in front,
 * a note the person wrote is kept) and its default approver picked, with the away check a pick
 * gets. Only a template of the form's own channel is applied, and only for one of its members
 * (checked again now: the form may have been opened before they left); views.update by hash, so a
 * form submitted or changed meanwhile is left alone.
 */
export function templatePicked(deps: Deps) {
  return async ({ ack, body, action, client }: Args): Promise<void> => {
    await ack();
    const form = filledFormOf(body.view);
    if (!form) return;
    const { view, metadata } = form;
    const pick = readPick(deps, body.user.id, metadata, view);
    try {
      const [verdict, template, previous, templates] = await Promise.all([
        deps.access.useTemplates(metadata.channelId, body.user.id),
        deps.templates.get(action.selected_option?.value ?? ''),
        metadata.templateId ? deps.templates.get(metadata.templateId) : undefined,
        templateOptions(deps, metadata.channelId, body.user.id),
      ]);
      const state = await formAfterPick(pick, { verdict, template, previous, templates });
      await client.views.update({
        view_id: view.id,
        hash: view.hash,
        view: buildApprovalModal(state, pick.t),
      });
    } catch (error) {
      // Another update (an approver pick, a newer template pick) won: this fill is lost, and the
      // winner drew the picker from what was applied (metadata.templateId), not from this pick.
      if ((error as { data?: { error?: string } }).data?.error === 'hash_conflict') return;
      logFailure(deps.logger, error, { user: body.user.id }, 'could not apply the template');
    }
  };
}

/** The form as it was when the pick was made: what was typed and picked, and what it showed. */
interface PickedForm {
  deps: Deps;
  userId: string;
  metadata: ModalMetadata;
  t: Messages;
  blocks: Block[];
  values: Values;
  typed: { title: string; note: string };
  pickedApprover: string | undefined;
}

function readPick(
  deps: Deps,
  userId: string,
  metadata: ModalMetadata,
  view: { state: { values: unknown }; blocks: unknown },
): PickedForm {
  const values = view.state.values as Values;
  const rev = metadata.revision;
  return {
    deps,
    userId,
    metadata,
    t: messagesFor(metadata.locale),
    blocks: view.blocks as Block[],
    values,
    typed: {
      title: values[fieldBlock(BLOCK.title, rev)]?.[ACTION.title]?.value ?? '',
      note: values[fieldBlock(BLOCK.note, rev)]?.[ACTION.note]?.value ?? '',
    },
    pickedApprover:
      values[fieldBlock(BLOCK.approver, rev)]?.[ACTION.approver]?.selected_user ?? undefined,
  };
}

type Found = {
  verdict: Awaited<ReturnType<Deps['access']['useTemplates']>>;
  template: RequestTemplate | undefined;
  previous: RequestTemplate | undefined;
  templates: ApprovalModalState['templates'];
};

/** The form drawn again after the pick: the template applied, or what was typed and why not. */
async function formAfterPick(pick: PickedForm, found: Found): Promise<ApprovalModalState> {
  const { metadata, t } = pick;
  const { verdict, template } = found;
  // Not (or no longer) one of the channel's members, as far as Slack says: nothing is applied and
  // the picker goes; the form says why and keeps what was typed.
  if (verdict !== 'allowed') {
    const state = asTyped(pick, found, { banner: t.templatesNotForYou(metadata.channelId) });
    delete state.metadata.templateId;
    return state;
  }
  // The pick names an id; it must be a template of the channel this form posts in.
  if (!template || template.channelId !== metadata.channelId || template.removedAt)
    return asTyped(pick, found, { templateNotice: [t.templateGone] });
  return applied(pick, found, template);
}

/** The form as typed, drawn again with `extra` (a banner or a notice saying why). */
function asTyped(
  pick: PickedForm,
  found: Found,
  extra: Partial<Pick<ApprovalModalState, 'banner' | 'templateNotice'>>,
): ApprovalModalState {
  return {
    ...baseOf(pick, found),
    ...pick.typed,
    ...(pick.pickedApprover ? { approverSlackId: pick.pickedApprover } : {}),
    approverNotice: contextLines(pick.blocks, BLOCK.approverNotice),
    ...extra,
    metadata: { ...pick.metadata, revision: (pick.metadata.revision ?? 0) + 1 },
  };
}

/** The form with the template's prefix and skeleton merged in and its approver picked. */
async function applied(
  pick: PickedForm,
  found: Found,
  template: RequestTemplate,
): Promise<ApprovalModalState> {
  const { deps, metadata, t } = pick;
  const merged = applyTemplate(pick.typed, template, found.previous);
  // The template's approver, or their delegate while away (said so).
  const proposed = template.approverChatId
    ? await templateApprover(deps, pick.userId, template.approverChatId, metadata, t)
    : undefined;
  const approver = proposed?.approver ?? pick.pickedApprover;
  const approverNotice =
    proposed?.approverNotice ?? contextLines(pick.blocks, BLOCK.approverNotice);
  return {
    ...baseOf(pick, found),
    title: merged.title,
    note: merged.note,
    ...(approver ? { approverSlackId: approver } : {}),
    approverNotice,
    templateNotice: [
      t.templateApplied(escapeMrkdwn(template.name)),
      ...(merged.noteKept ? [t.templateNoteKept] : []),
    ],
    metadata: { ...metadata, revision: (metadata.revision ?? 0) + 1, templateId: template.id },
  };
}

function baseOf(pick: PickedForm, found: Found) {
  return {
    info: contextLines(pick.blocks, BLOCK.lookup),
    ...approverLoginOf(pick.blocks, pick.values),
    templates: found.templates,
  };
}

/** The lines of a context block of the form as drawn (already escaped mrkdwn). */
function contextLines(blocks: Block[], blockId: string): string[] {
  const block = blocks.find((b) => b.block_id === blockId);
  return (block?.elements ?? []).map((e) => e.text ?? '').filter(Boolean);
}

/** The approver-login field (a leader not on Slack), as the person left it. */
function approverLoginOf(
  blocks: Block[],
  values: Values,
): Pick<ApprovalModalState, 'approverLogin'> {
  const block = blocks.find((b) => b.block_id === BLOCK.approverLogin);
  if (!block) return {};
  const hint = (block.hint as { text?: string } | undefined)?.text ?? '';
  const value = values[BLOCK.approverLogin]?.[ACTION.approverLogin]?.value ?? '';
  return { approverLogin: { value, hint } };
}

export function registerTemplatePick(app: App, deps: Deps): void {
  app.action<BlockAction<StaticSelectAction>>(
    { type: 'block_actions', action_id: ACTION.template },
    templatePicked(deps),
  );
}
