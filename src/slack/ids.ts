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
} as const;

export const BLOCK = {
  lookup: 'lookup',
  banner: 'banner',
  title: 'title',
  note: 'note',
  approver: 'approver',
  approverLogin: 'approver_login',
  /** Beside the approver: whether they are away, and who is next up the chain. */
  approverNotice: 'approver_notice',
  channel: 'channel',
  sessionToken: 'session_token',
  confirmation: 'step_confirmation',
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
  /** The requester's answer to a workflow step that would start an approval in their name. */
  confirmStart: 'step_confirm_start',
  confirmDecline: 'step_confirm_decline',
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
