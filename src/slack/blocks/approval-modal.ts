import type { KnownBlock, ModalView } from '@slack/types';
import type { Messages } from '../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../ids.ts';
import { truncate } from './request-message.ts';

/** What the modal carries between its updates and the submission (private_metadata). */
export interface ModalMetadata {
  /** Channel the command was run in; empty when the form was opened from the ⚡ menu. */
  channelId: string;
  /** The thread of the message a message shortcut was used on. */
  threadTs?: string;
  /** The form has a channel picker; nothing picked means the requester's DM. */
  pickChannel?: boolean;
  locale: string;
  requesterLogin?: string;
  /** The suggested approver, when one was found on Slack. */
  suggestion?: { login: string; slackId: string };
  /** Set once the lookup filled the form in; before that a pick is not re-checked (see approver-pick.ts). */
  filled?: boolean;
  /** The approval this form requests again ("Request again"), and its request message's link. */
  againOf?: { djbh: string; link: string | null };
  /**
   * How many times a template filled the fields in. Slack keeps what was typed in an input whose
   * block_id stays the same across views.update, whatever initial_value says; so each fill gives
   * the title, note, approver and template-picker blocks new ids (see fieldBlock), and the
   * submission reads them by the same revision. A redraw whose picker must show something other
   * than what Slack kept in it (a pick whose fill was lost) takes a new revision too.
   */
  revision?: number;
  /**
   * The template that last filled the fields in, set only by an applied fill: its prefix and
   * skeleton are swapped on the next pick, and it is what the picker shows.
   */
  templateId?: string;
}

/** The block_id of a field the template picker can overwrite, at the form's `revision`. */
export function fieldBlock(base: string, revision: number | undefined): string {
  return revision ? `${base}.${revision}` : base;
}

/**
 * The template a submitted form was filled from: the one whose fill was applied, and only while the
 * picker still shows it. A pick whose fill never landed (its update lost to another) or a picker
 * changed afterwards names none, so the request never claims a template it was not filled from.
 */
export function appliedTemplate(
  metadata: Pick<ModalMetadata, 'templateId' | 'revision'>,
  values: Record<string, Record<string, { selected_option?: { value?: string } | null }>>,
): string | undefined {
  const shown =
    values[fieldBlock(BLOCK.template, metadata.revision)]?.[ACTION.template]?.selected_option
      ?.value;
  return metadata.templateId && shown === metadata.templateId ? metadata.templateId : undefined;
}

/** A template as the form offers it. */
export interface TemplateOption {
  id: string;
  name: string;
}

export interface ApprovalModalState {
  title: string;
  note: string;
  approverSlackId?: string;
  /**
   * Offered when the suggested leader has no Slack account: their service login, prefilled, so the
   * person can still send it to them. A person picked in Slack takes precedence.
   */
  approverLogin?: { value: string; hint: string };
  /** Lines about the lookup: department chain, suggestion, or why there is none. */
  info: string[];
  /** Lines right under the approver: they are away, and who is next up the chain. */
  approverNotice?: string[];
  /** A problem to show above the fields, e.g. the service being down. */
  banner?: string;
  /** The channel's templates, offered at the top; none: no picker. */
  templates?: TemplateOption[];
  /** Lines under the picker: which template filled the form in, and what it left alone. */
  templateNotice?: string[];
  metadata: ModalMetadata;
}

/** Slack's most for an option's text; a longer template name is cut in the picker only. */
const OPTION_TEXT_MAX = 75;

export const TITLE_MAX = 200;
// Slack caps plain_text_input at 3000 characters; the service takes more (20,000, or 5,000 on
// older installs), which matters once emoji become :short_name: (checked in prepareApproval).
export const NOTE_MAX = 3000;
/** The most any plain_text_input holds in Slack. */
const INPUT_MAX = 3000;

/** The request form. Block and action ids stay the same across updates so Slack keeps what was typed. */
export function buildApprovalModal(state: ApprovalModalState, t: Messages): ModalView {
  const blocks: KnownBlock[] = [];
  if (state.banner) {
    blocks.push(bannerBlock(state.banner));
  }
  if (state.info.length > 0) {
    blocks.push({
      type: 'context',
      block_id: BLOCK.lookup,
      elements: state.info.map((line) => ({ type: 'mrkdwn', text: line })),
    });
  }
  const revision = state.metadata.revision;
  if (state.templates && state.templates.length > 0) {
    blocks.push(templatePickerBlock(state.templates, state.metadata.templateId, revision, t));
    if (state.templateNotice && state.templateNotice.length > 0)
      blocks.push({
        type: 'context',
        block_id: BLOCK.templateNotice,
        elements: state.templateNotice.map((line) => ({ type: 'mrkdwn', text: line })),
      });
  }
  blocks.push(
    titleBlock(state.title, t, fieldBlock(BLOCK.title, revision)),
    textInputBlock({
      blockId: fieldBlock(BLOCK.note, revision),
      actionId: ACTION.note,
      label: t.noteLabel,
      hint: t.noteHint(NOTE_MAX),
      maxLength: NOTE_MAX,
      value: state.note,
      multiline: true,
    }),
    ...noteCutNotice(state.note, t),
    {
      type: 'input',
      block_id: fieldBlock(BLOCK.approver, revision),
      label: { type: 'plain_text', text: t.approverLabel },
      // A pick is sent at once (block_actions), so the form can say whether that person is away.
      dispatch_action: true,
      // With a login field beside it, either one names the approver.
      ...(state.approverLogin ? { optional: true } : {}),
      element: {
        type: 'users_select',
        action_id: ACTION.approver,
        placeholder: { type: 'plain_text', text: t.choosePerson },
        ...(state.approverSlackId ? { initial_user: state.approverSlackId } : {}),
      },
    },
  );
  if (state.approverNotice && state.approverNotice.length > 0) {
    blocks.push({
      type: 'context',
      block_id: BLOCK.approverNotice,
      elements: state.approverNotice.map((line) => ({ type: 'mrkdwn', text: line })),
    });
  }
  if (state.metadata.pickChannel) {
    blocks.push({
      type: 'input',
      block_id: BLOCK.channel,
      optional: true,
      label: { type: 'plain_text', text: t.channelLabel },
      hint: { type: 'plain_text', text: t.channelHint },
      element: {
        type: 'conversations_select',
        action_id: ACTION.channel,
        placeholder: { type: 'plain_text', text: t.chooseChannel },
        filter: { include: ['public', 'private'], exclude_bot_users: true },
      },
    });
  }
  if (state.approverLogin) {
    blocks.push(
      textInputBlock({
        blockId: BLOCK.approverLogin,
        actionId: ACTION.approverLogin,
        label: t.approverLoginLabel,
        hint: state.approverLogin.hint,
        maxLength: 100,
        value: state.approverLogin.value,
        optional: true,
      }),
    );
  }
  return {
    type: 'modal',
    callback_id: CALLBACK.approvalModal,
    title: { type: 'plain_text', text: t.modalTitle },
    submit: { type: 'plain_text', text: t.submit },
    close: { type: 'plain_text', text: t.cancel },
    private_metadata: JSON.stringify(state.metadata),
    blocks,
  };
}

/**
 * The title field. A prefilled title longer than the service takes (`/approve <long text>`) is
 * shown whole, never cut: the field makes room for it and its hint says what to shorten; the
 * submission refuses it with a field error until it fits.
 */
function titleBlock(title: string, t: Messages, blockId: string): KnownBlock {
  const length = [...title].length;
  const tooLong = length > TITLE_MAX;
  return textInputBlock({
    blockId,
    actionId: ACTION.title,
    label: t.titleLabel,
    hint: tooLong ? t.titleTooLong(length, TITLE_MAX) : t.titleHint,
    maxLength: tooLong ? Math.min(length, INPUT_MAX) : TITLE_MAX,
    value: title,
  });
}

/**
 * The picker of the channel's templates: a pick is sent at once (dispatch_action), and the app
 * fills the fields in. Optional: the form works as before without one.
 */
function templatePickerBlock(
  templates: TemplateOption[],
  selectedId: string | undefined,
  revision: number | undefined,
  t: Messages,
): KnownBlock {
  const options = templates.map((template) => ({
    text: { type: 'plain_text' as const, text: truncate(template.name, OPTION_TEXT_MAX) },
    value: template.id,
  }));
  const selected = options.find((o) => o.value === selectedId);
  return {
    type: 'input',
    block_id: fieldBlock(BLOCK.template, revision),
    optional: true,
    dispatch_action: true,
    label: { type: 'plain_text', text: t.templateLabel },
    hint: { type: 'plain_text', text: t.templateHint },
    element: {
      type: 'static_select',
      action_id: ACTION.template,
      placeholder: { type: 'plain_text', text: t.chooseTemplate },
      options,
      ...(selected ? { initial_option: selected } : {}),
    },
  };
}

/** A modal with only text and a Close button: "submitting…", "started", or a failure. */
export function buildMessageModal(lines: string[], t: Messages, title = t.modalTitle): ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK.approvalModal,
    title: { type: 'plain_text', text: title },
    close: { type: 'plain_text', text: t.close },
    blocks: lines.map((line) => ({ type: 'section', text: { type: 'mrkdwn', text: line } })),
  };
}

export function parseModalMetadata(raw: string): ModalMetadata | undefined {
  try {
    const parsed = JSON.parse(raw) as Partial<ModalMetadata>;
    return typeof parsed.channelId === 'string' && typeof parsed.locale === 'string'
      ? (parsed as ModalMetadata)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The request form a pick inside it came from, once it is filled in; undefined for any other view
 * and while the form is still being looked up: an update then would change the view's hash and
 * make the lookup's own update (by hash) fail, leaving the form unfilled. A pick made meanwhile
 * stands and is checked on submit.
 */
export function filledFormOf<V extends { callback_id: string; private_metadata: string }>(
  view: V | undefined,
): { view: V; metadata: ModalMetadata } | undefined {
  const metadata = view ? parseModalMetadata(view.private_metadata) : undefined;
  if (!view || !metadata?.filled || view.callback_id !== CALLBACK.approvalModal) return undefined;
  return { view, metadata };
}

/** A warning above a form's fields, e.g. why the last submission did not go through. */
export function bannerBlock(text: string): KnownBlock {
  return {
    type: 'section',
    block_id: BLOCK.banner,
    text: { type: 'mrkdwn', text: `:warning: ${text}` },
  };
}

/**
 * A line under the note when the prefilled note (Request again of a workflow-started approval,
 * whose note no field limited) is longer than the field holds: Slack would cut it without a word.
 */
function noteCutNotice(note: string, t: Messages): KnownBlock[] {
  const length = [...note].length;
  if (length <= NOTE_MAX) return [];
  return [
    {
      type: 'context',
      block_id: BLOCK.noteCut,
      elements: [{ type: 'mrkdwn', text: t.noteCut(length, NOTE_MAX) }],
    },
  ];
}

/**
 * A plain-text input block. A prefilled value must fit `maxLength` (Slack refuses or cuts a longer
 * one); only beyond Slack's own 3000 is it cut, which no title or login reaches.
 */
export function textInputBlock(input: {
  blockId: string;
  actionId: string;
  label: string;
  hint?: string;
  maxLength: number;
  value?: string;
  multiline?: boolean;
  optional?: boolean;
}): KnownBlock {
  return {
    type: 'input',
    block_id: input.blockId,
    ...(input.optional ? { optional: true } : {}),
    label: { type: 'plain_text', text: input.label },
    ...(input.hint ? { hint: { type: 'plain_text', text: input.hint } } : {}),
    element: {
      type: 'plain_text_input',
      action_id: input.actionId,
      max_length: input.maxLength,
      ...(input.multiline ? { multiline: true } : {}),
      ...(input.value
        ? { initial_value: [...input.value].slice(0, input.maxLength).join('') }
        : {}),
    },
  };
}
