// Every callback_id, block_id and action_id the app uses, defined once.

export const CALLBACK = {
  approvalModal: 'approval_request',
  linkModal: 'link_account',
  /** The ⚡ menu's "Request approval" (manifest shortcuts, type global). */
  globalShortcut: 'request_approval',
  /** A message's "⋯" menu "Request approval" (manifest shortcuts, type message). */
  messageShortcut: 'request_approval_from_message',
  /** The Workflow Builder step (manifest functions). */
  workflowStep: 'request_approval_step',
  /** The modal a workflow's requester confirms its step in, when they ran it themselves. */
  confirmModal: 'step_confirm_modal',
  /** `/approve templates`: the channel's templates, and the editor of one (add or edit). */
  templatesModal: 'request_templates',
  templateEditor: 'request_template_edit',
  /** App Home's "while I am away": the modal that sets a delegate. */
  delegateModal: 'delegate_while_away',
} as const;

export const BLOCK = {
  lookup: 'lookup',
  banner: 'banner',
  title: 'title',
  note: 'note',
  /** Under the note: that a prefilled note was longer than the field, and what to do. */
  noteCut: 'note_cut',
  approver: 'approver',
  approverLogin: 'approver_login',
  /** Beside the approver: whether they are away, and who is next up the chain. */
  approverNotice: 'approver_notice',
  channel: 'channel',
  sessionToken: 'session_token',
  confirmation: 'step_confirmation',
  /** The request form's template picker, and the line under it saying what the template did. */
  template: 'template',
  templateNotice: 'template_notice',
  /** The template editor's fields. */
  templateName: 'template_name',
  templatePrefix: 'template_prefix',
  templateSkeleton: 'template_skeleton',
  templateApprover: 'template_approver',
  templateSteps: 'template_steps',
  /** The delegate modal's fields. */
  delegateTo: 'delegate_to',
  delegateUntil: 'delegate_until',
} as const;

export const ACTION = {
  title: 'title_input',
  note: 'note_input',
  approver: 'approver_select',
  approverLogin: 'approver_login_input',
  channel: 'channel_select',
  sessionToken: 'session_token_input',
  openInService: 'open_in_service',
  viewThread: 'view_thread',
  /** "Request again" on a request that ended without a yes, and on App Home; value: its number. */
  requestAgain: 'request_again',
  startStep: 'start_step',
  /** The requester's answer to a workflow step that would start an approval in their name. */
  confirmStart: 'step_confirm_start',
  confirmDecline: 'step_confirm_decline',
  /** The request form's template picker (a pick fills the fields in); value: the template's id. */
  template: 'template_select',
  /** In the templates modal: add one, edit one, remove one (value: the template's id). */
  templateAdd: 'template_add',
  templateEdit: 'template_edit',
  templateRemove: 'template_remove',
  templateName: 'template_name_input',
  templatePrefix: 'template_prefix_input',
  templateSkeleton: 'template_skeleton_input',
  templateApprover: 'template_approver_select',
  templateSteps: 'template_steps_input',
  /** App Home: open the delegate modal, or clear the delegation. */
  delegateOpen: 'delegate_open',
  delegateClear: 'delegate_clear',
  delegateTo: 'delegate_to_select',
  delegateUntil: 'delegate_until_pick',
} as const;

/** `event_type` of the metadata on every message the app posts (see announcement-dispatcher.ts). */
export const ANNOUNCEMENT_EVENT = 'approval_announcement';

/**
 * Whether a Slack id names a person (a member or a bot user) rather than a conversation: `U…`, or
 * `W…` for members of an Enterprise Grid organization. Either can be given where Slack takes a
 * user id, e.g. as the `channel` of chat.postMessage to reach that person's DM with the app.
 */
export function isUserId(id: string): boolean {
  return /^[UW][A-Z0-9]+$/.test(id);
}

/**
 * Whether a conversation id is a DM (`D…`), where a slash command's `channel_id` names the
 * person's DM with whoever they were writing to; channels and group DMs have other prefixes.
 */
export function isDirectMessage(id: string): boolean {
  return /^D[A-Z0-9]+$/.test(id);
}
