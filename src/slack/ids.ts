// Every callback_id, block_id and action_id the app uses, defined once.

export const CALLBACK = {
  approvalModal: 'approval_request',
  linkModal: 'link_account',
} as const;

export const BLOCK = {
  lookup: 'lookup',
  banner: 'banner',
  title: 'title',
  note: 'note',
  approver: 'approver',
  approverLogin: 'approver_login',
  sessionToken: 'session_token',
} as const;

export const ACTION = {
  title: 'title_input',
  note: 'note_input',
  approver: 'approver_select',
  approverLogin: 'approver_login_input',
  sessionToken: 'session_token_input',
  openInService: 'open_in_service',
  viewThread: 'view_thread',
} as const;

/** `event_type` of the metadata on every message the app posts (see announcement-dispatcher.ts). */
export const ANNOUNCEMENT_EVENT = 'approval_announcement';
