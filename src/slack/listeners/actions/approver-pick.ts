import type {
  AllMiddlewareArgs,
  App,
  BlockAction,
  SlackActionMiddlewareArgs,
  UsersSelectAction,
} from '@slack/bolt';
import type { KnownBlock, ModalView } from '@slack/types';
import { logFailure } from '../../../logger.ts';
import { fieldBlock, filledFormOf } from '../../blocks/approval-modal.ts';
import { messagesFor } from '../../i18n.ts';
import { ACTION, BLOCK } from '../../ids.ts';
import { noticeFor } from '../../requests/approval-form.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<SlackDeps, 'people' | 'identities' | 'service' | 'logger' | 'now' | 'delegations'>;
type Args = SlackActionMiddlewareArgs<BlockAction<UsersSelectAction>> & AllMiddlewareArgs;
type Values = Record<
  string,
  Record<
    string,
    {
      value?: string | null;
      selected_user?: string | null;
      selected_option?: { text: { type: 'plain_text'; text: string }; value: string } | null;
    }
  >
>;

/**
 * The person picked an approver in the request form: say beside the field whether that person is
 * away, and who is next up their chain (views.update, by hash, so a form submitted or changed
 * meanwhile is left alone). Advice only: the pick stands whatever the answer.
 */
export function approverPicked(deps: Deps) {
  return async ({ ack, body, action, client }: Args): Promise<void> => {
    await ack();
    const form = filledFormOf(body.view);
    if (!form) return;
    const { view, metadata } = form;
    const picked = action.selected_user ?? undefined;
    const t = messagesFor(metadata.locale);
    try {
      const notice = picked ? await noticeFor(deps, body.user.id, picked, metadata, t) : [];
      const values = view.state.values as Values;
      const rev = metadata.revision;
      const next = nextRevision(values, metadata);
      const blocks = withNotice(view.blocks as KnownBlock[], values, picked, notice, {
        revision: rev,
        next,
        templateId: metadata.templateId,
      });
      const privateMetadata =
        next === rev ? view.private_metadata : JSON.stringify({ ...metadata, revision: next });
      await client.views.update({
        view_id: view.id,
        hash: view.hash,
        view: sameModal(view, privateMetadata, blocks),
      });
    } catch (error) {
      // The person submitted or picked again meanwhile: the newer view wins.
      if ((error as { data?: { error?: string } }).data?.error === 'hash_conflict') return;
      logFailure(deps.logger, error, { user: body.user.id }, 'could not check the approver');
    }
  };
}

/**
 * The picker shows the template whose fill was applied. Slack keeps what the person chose in an
 * input whose block_id stays, so when that differs (their pick's fill lost to this update) the
 * fields take the next revision, drawn from what they hold now.
 */
function nextRevision(
  values: Values,
  metadata: { revision?: number | undefined; templateId?: string | undefined },
): number | undefined {
  const rev = metadata.revision;
  const shown = values[fieldBlock(BLOCK.template, rev)]?.[ACTION.template]?.selected_option?.value;
  return shown && shown !== metadata.templateId ? (rev ?? 0) + 1 : rev;
}

/** The same modal (title, buttons, callback) with these blocks and metadata. */
function sameModal(
  view: {
    callback_id: string;
    title: ModalView['title'];
    submit?: ModalView['submit'] | null;
    close?: ModalView['close'] | null;
  },
  privateMetadata: string,
  blocks: KnownBlock[],
): ModalView {
  return {
    type: 'modal',
    callback_id: view.callback_id,
    title: view.title,
    ...(view.submit ? { submit: view.submit } : {}),
    ...(view.close ? { close: view.close } : {}),
    private_metadata: privateMetadata,
    blocks,
  };
}

/** The fields a template fill overwrites, whose block ids carry the form's revision. */
const REVISED = [BLOCK.title, BLOCK.note, BLOCK.approver, BLOCK.template];

/**
 * The form as it is, with what was typed kept, the pick as the approver, the template picker
 * showing the template applied (`templateId`), and the notice right under the approver (or none);
 * the revised fields move from `revision` to `next` when they differ.
 */
function withNotice(
  blocks: KnownBlock[],
  values: Values,
  picked: string | undefined,
  notice: string[],
  form: { revision: number | undefined; next: number | undefined; templateId: string | undefined },
): KnownBlock[] {
  const renamed = new Map(
    REVISED.map((base) => [fieldBlock(base, form.revision), fieldBlock(base, form.next)]),
  );
  const out: KnownBlock[] = [];
  for (const block of blocks) {
    if (block.block_id === BLOCK.approverNotice) continue;
    const kept = keepTyped(block, values, picked, form.templateId);
    const blockId = block.block_id && renamed.get(block.block_id);
    out.push(blockId ? { ...kept, block_id: blockId } : kept);
    if (block.block_id === fieldBlock(BLOCK.approver, form.revision) && notice.length > 0) {
      out.push({
        type: 'context',
        block_id: BLOCK.approverNotice,
        elements: notice.map((text) => ({ type: 'mrkdwn', text })),
      });
    }
  }
  return out;
}

function keepTyped(
  block: KnownBlock,
  values: Values,
  picked: string | undefined,
  templateId: string | undefined,
): KnownBlock {
  if (block.type !== 'input' || !block.block_id) return block;
  const element = { ...(block.element as unknown as Record<string, unknown>) };
  const state = values[block.block_id]?.[String(element.action_id)];
  if (element.action_id === ACTION.approver) {
    delete element.initial_user;
    if (picked) element.initial_user = picked;
  } else if (element.action_id === ACTION.template) {
    // What was applied, not what the picker says: a pick whose fill was lost shows as no pick.
    delete element.initial_option;
    const options = (element.options ?? []) as Array<{ value: string }>;
    const applied = options.find((o) => o.value === templateId);
    if (applied) element.initial_option = applied;
  } else if (element.type === 'plain_text_input' && state) {
    delete element.initial_value;
    if (state.value) element.initial_value = state.value;
  }
  return { ...block, element } as unknown as KnownBlock;
}

export function registerApproverPick(app: App, deps: Deps): void {
  app.action<BlockAction<UsersSelectAction>>(
    { type: 'block_actions', action_id: ACTION.approver },
    approverPicked(deps),
  );
}
