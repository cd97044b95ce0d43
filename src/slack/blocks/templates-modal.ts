import type { KnownBlock, ModalView } from '@slack/types';
import {
  type RequestTemplate,
  TEMPLATE_LIMITS,
  type TemplateChange,
} from '../../approvals/request-templates.ts';
import { ruleText } from '../../approvals/steps.ts';
import type { Messages } from '../i18n.ts';
import { ACTION, BLOCK, CALLBACK } from '../ids.ts';
import { textInputBlock } from './approval-modal.ts';
import { escapeMrkdwn, FIELD_MAX, fitMrkdwn, SECTION_MAX, truncate } from './request-message.ts';

/** What the templates modal and its editor carry (private_metadata): a claim, checked on use. */
export interface TemplatesMetadata {
  channelId: string;
  locale: string;
  /** The template being edited; absent while adding one. */
  templateId?: string;
}

/** How many recent changes the templates modal lists. */
export const HISTORY_SHOWN = 5;

export interface TemplatesModalState {
  channelId: string;
  locale: string;
  /** The reader's time zone, for the dates of changes. */
  timeZone: string | undefined;
  templates: RequestTemplate[];
  history: TemplateChange[];
}

const mention = (userId: string) => `<@${userId}>`;
// A template's note skeleton as the list shows it: enough to recognise, not the whole of it.
const NOTE_SHOWN = 300;

/**
 * `/approve templates`: the channel's templates, each with what it fills in, who added and last
 * edited it and an Edit button; Add (while under the limit); and the latest changes, removals
 * included. All typed text is escaped; nothing here can be submitted, only opened for editing.
 */
export function buildTemplatesModal(state: TemplatesModalState, t: Messages): ModalView {
  const { templates, timeZone } = state;
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: t.templatesIntro(state.channelId, templates.length, TEMPLATE_LIMITS.perChannel),
      },
    },
  ];
  if (templates.length === 0)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: t.templatesNone }] });
  for (const template of templates) {
    const lines = [`*${escapeMrkdwn(template.name)}*`];
    if (template.titlePrefix) lines.push(t.templatePrefixShown(escapeMrkdwn(template.titlePrefix)));
    if (template.approverChatId)
      lines.push(t.templateApproverShown(mention(template.approverChatId)));
    // What the note starts as, so a channel can tell its templates apart without opening each.
    if (template.noteSkeleton)
      lines.push(
        t.templateNoteShown(
          fitMrkdwn(escapeMrkdwn(template.noteSkeleton), NOTE_SHOWN)
            .split('\n')
            .map((line) => `>${line}`)
            .join('\n'),
        ),
      );
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: fitMrkdwn(lines.join('\n'), SECTION_MAX) },
      accessory: {
        type: 'button',
        action_id: ACTION.templateEdit,
        text: { type: 'plain_text', text: t.templateEdit },
        value: template.id,
      },
    });
    const made = t.templateAddedBy(mention(template.createdBy), template.createdAt, timeZone);
    const edited =
      template.updatedAt.getTime() > template.createdAt.getTime() ||
      template.updatedBy !== template.createdBy
        ? ` · ${t.templateEditedBy(mention(template.updatedBy), template.updatedAt, timeZone)}`
        : '';
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: made + edited }] });
  }
  if (templates.length < TEMPLATE_LIMITS.perChannel) {
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          action_id: ACTION.templateAdd,
          style: 'primary',
          text: { type: 'plain_text', text: t.templateAdd },
        },
      ],
    });
  } else {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: t.templateFull(TEMPLATE_LIMITS.perChannel) }],
    });
  }
  if (state.history.length > 0) {
    const lines = state.history.map((change) =>
      t.templateChange(change, escapeMrkdwn(change.name), mention(change.by), timeZone),
    );
    blocks.push(
      { type: 'divider' },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: fitMrkdwn([t.templatesHistory, ...lines].join('\n'), FIELD_MAX) },
        ],
      },
    );
  }
  const metadata: TemplatesMetadata = { channelId: state.channelId, locale: state.locale };
  return {
    type: 'modal',
    callback_id: CALLBACK.templatesModal,
    title: { type: 'plain_text', text: t.templatesTitle },
    close: { type: 'plain_text', text: t.close },
    private_metadata: JSON.stringify(metadata),
    blocks,
  };
}

/**
 * The editor of one template (or of a new one): name, title prefix, note skeleton, default
 * approver; for an existing one, Remove (Slack asks the person to confirm first). Inputs cap what
 * can be typed at the limits the submission checks again.
 */
export function buildTemplateEditor(
  state: { channelId: string; locale: string; template?: RequestTemplate },
  t: Messages,
): ModalView {
  const { template } = state;
  const blocks: KnownBlock[] = [
    textInputBlock({
      blockId: BLOCK.templateName,
      actionId: ACTION.templateName,
      label: t.templateNameLabel,
      hint: t.templateNameHint,
      maxLength: TEMPLATE_LIMITS.name,
      ...(template ? { value: template.name } : {}),
    }),
    textInputBlock({
      blockId: BLOCK.templatePrefix,
      actionId: ACTION.templatePrefix,
      label: t.templatePrefixLabel,
      hint: t.templatePrefixHint,
      maxLength: TEMPLATE_LIMITS.titlePrefix,
      optional: true,
      ...(template ? { value: template.titlePrefix } : {}),
    }),
    textInputBlock({
      blockId: BLOCK.templateSkeleton,
      actionId: ACTION.templateSkeleton,
      label: t.templateSkeletonLabel,
      hint: t.templateSkeletonHint,
      maxLength: TEMPLATE_LIMITS.noteSkeleton,
      multiline: true,
      optional: true,
      ...(template ? { value: template.noteSkeleton } : {}),
    }),
    {
      type: 'input',
      block_id: BLOCK.templateApprover,
      optional: true,
      label: { type: 'plain_text', text: t.templateApproverLabel },
      hint: { type: 'plain_text', text: t.templateApproverHint },
      element: {
        type: 'users_select',
        action_id: ACTION.templateApprover,
        placeholder: { type: 'plain_text', text: t.choosePerson },
        ...(template?.approverChatId ? { initial_user: template.approverChatId } : {}),
      },
    },
    stepsInput(template, t),
  ];
  if (template) {
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          action_id: ACTION.templateRemove,
          style: 'danger',
          text: { type: 'plain_text', text: t.templateRemove },
          value: template.id,
          confirm: {
            title: { type: 'plain_text', text: t.templateRemoveConfirmTitle },
            text: {
              type: 'mrkdwn',
              text: removeConfirmText(template.name, t),
            },
            confirm: { type: 'plain_text', text: t.templateRemoveYes },
            deny: { type: 'plain_text', text: t.cancel },
            style: 'danger',
          },
        },
      ],
    });
  }
  const metadata: TemplatesMetadata = {
    channelId: state.channelId,
    locale: state.locale,
    ...(template ? { templateId: template.id } : {}),
  };
  return {
    type: 'modal',
    callback_id: CALLBACK.templateEditor,
    title: {
      type: 'plain_text',
      text: truncate(template ? t.templateEditorEdit : t.templateEditorNew, 24),
    },
    submit: { type: 'plain_text', text: t.save },
    close: { type: 'plain_text', text: t.cancel },
    private_metadata: JSON.stringify(metadata),
    blocks,
  };
}

export function parseTemplatesMetadata(raw: string): TemplatesMetadata | undefined {
  try {
    const parsed = JSON.parse(raw) as Partial<TemplatesMetadata>;
    if (typeof parsed.channelId !== 'string' || typeof parsed.locale !== 'string') return undefined;
    if (parsed.templateId !== undefined && typeof parsed.templateId !== 'string') return undefined;
    return parsed as TemplatesMetadata;
  } catch {
    return undefined;
  }
}

/** Slack's most for a confirmation dialog's text. */
const CONFIRM_TEXT_MAX = 300;

/**
 * The Remove confirmation naming the template: the name is escaped, then cut to what the dialog
 * leaves it, so a name of 50 `&` (250 characters once escaped) cannot make Slack refuse the editor.
 */
function removeConfirmText(name: string, t: Messages): string {
  const room = CONFIRM_TEXT_MAX - [...t.templateRemoveConfirm('')].length;
  return t.templateRemoveConfirm(fitMrkdwn(escapeMrkdwn(name), room));
}

/** The steps after the form's approver, one a line (approvals/steps.ts). */
function stepsInput(template: RequestTemplate | undefined, t: Messages): KnownBlock {
  return textInputBlock({
    blockId: BLOCK.templateSteps,
    actionId: ACTION.templateSteps,
    label: t.templateStepsLabel,
    hint: t.templateStepsHint,
    maxLength: 600,
    multiline: true,
    optional: true,
    ...(template?.laterSteps?.length
      ? { value: template.laterSteps.map(ruleText).join('\n') }
      : {}),
  });
}
