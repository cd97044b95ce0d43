import type { ViewOutput } from '@slack/bolt';
import type { DraftField } from '../../approvals/approval-request.ts';
import {
  appliedTemplate,
  fieldBlock,
  type ModalMetadata,
  parseModalMetadata,
  type TemplateOption,
} from '../blocks/approval-modal.ts';
import { ACTION, BLOCK } from '../ids.ts';

/** The request form as submitted: what was typed and picked, read from the view once. */
export interface SubmittedForm {
  metadata: ModalMetadata;
  /** Who submitted it. */
  userId: string;
  title: string;
  note: string;
  approverSlackId: string | undefined;
  typedLogin: string | undefined;
  /** The template whose fill was applied and still shows (appliedTemplate); only a claim. */
  templateId: string | undefined;
  /** Where it asks to be posted: the form's channel, the one picked in it, else the requester's DM. */
  channelId: string;
  /** The block id of a field: a template's fill gives fields new ids (ModalMetadata.revision). */
  blockOf(field: DraftField): string;
  /** The templates the form offered, to offer them again when it comes back with a banner. */
  templates: TemplateOption[];
}

const FIELD_BLOCKS: Record<DraftField, string> = {
  title: BLOCK.title,
  note: BLOCK.note,
  approver: BLOCK.approver,
};

/** Reads a submitted request form; undefined when its metadata is not the app's. */
export function readSubmittedForm(view: ViewOutput, userId: string): SubmittedForm | undefined {
  const metadata = parseModalMetadata(view.private_metadata);
  if (!metadata) return undefined;
  const values = view.state.values;
  const blockOf = (field: DraftField) => fieldBlock(FIELD_BLOCKS[field], metadata.revision);
  // Opened from the ⚡ menu: the channel picked in the form, else the requester's DM.
  const picked = values[BLOCK.channel]?.[ACTION.channel]?.selected_conversation ?? undefined;
  return {
    metadata,
    userId,
    title: values[blockOf('title')]?.[ACTION.title]?.value ?? '',
    note: values[blockOf('note')]?.[ACTION.note]?.value ?? '',
    approverSlackId: values[blockOf('approver')]?.[ACTION.approver]?.selected_user ?? undefined,
    typedLogin: values[BLOCK.approverLogin]?.[ACTION.approverLogin]?.value?.trim() || undefined,
    // Only a fill that was applied, and is still what the picker shows (see appliedTemplate).
    templateId: appliedTemplate(metadata, values),
    channelId: metadata.channelId || picked || userId,
    blockOf,
    templates: templatesOffered(view.blocks, metadata.revision),
  };
}

function templatesOffered(
  blocks: readonly unknown[],
  revision: number | undefined,
): TemplateOption[] {
  const picker = (blocks as Array<{ block_id?: string; element?: { options?: unknown } }>).find(
    (b) => b.block_id === fieldBlock(BLOCK.template, revision),
  );
  const options = (picker?.element?.options ?? []) as Array<{
    value: string;
    text: { text: string };
  }>;
  return options.map((o) => ({ id: o.value, name: o.text.text }));
}
