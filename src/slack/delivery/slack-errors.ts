/**
 * Every error Slack documents for the Web API methods the outbox calls, and what the outbox does
 * about each, in one table. Taken from each method's reference page (the "Errors" section) and
 * the errors Slack documents for every method. A code missing here is taken as `give-up`: the
 * announcement fails, is logged at error and can be re-driven once the cause is fixed.
 *
 * - `retry`: may pass later (Slack's hiccup, a limit); tried again with backoff.
 * - `fallback`: this conversation cannot take it (or cannot be read); the announcement's rule says
 *   where it goes instead (see announcement-rules.ts). For the approver's DM it means the approver
 *   cannot be reached: the requester is told and reminders stop.
 * - `done`: nothing left to do (the message to edit is gone, the step was completed already).
 * - `pause`: the app's own token cannot act; no announcement can go out, so delivery pauses
 *   fleet-wide until `auth.test` passes again. Nothing is failed for it.
 * - `give-up`: never passes as sent (a bug in what we send, a configuration error).
 */
export type SlackErrorClass = 'retry' | 'fallback' | 'done' | 'pause' | 'give-up';

/** The Web API methods the outbox calls. */
export type OutboxMethod =
  | 'chat.postMessage'
  | 'chat.update'
  | 'chat.getPermalink'
  | 'conversations.open'
  | 'conversations.history'
  | 'conversations.replies'
  | 'users.info'
  | 'users.lookupByEmail'
  | 'functions.completeSuccess'
  | 'functions.completeError'
  | 'auth.test';

type Table = Readonly<Record<string, SlackErrorClass>>;

/** Errors Slack documents for every method. */
const EVERY_METHOD: Table = {
  // The token cannot act: revoked, expired, the app uninstalled, the workspace or bot deleted,
  // a call from a network the workspace does not allow, an enterprise migration under way.
  invalid_auth: 'pause',
  not_authed: 'pause',
  token_revoked: 'pause',
  token_expired: 'pause',
  account_inactive: 'pause',
  accesslimited: 'pause',
  org_login_required: 'pause',
  not_allowed_token_type: 'pause',
  two_factor_setup_required: 'pause',
  team_access_not_granted: 'pause',
  // Passing trouble on Slack's side; fatal_error, internal_error and request_timeout may have
  // carried the call out (MAY_HAVE_TAKEN_EFFECT).
  ratelimited: 'retry',
  rate_limited: 'retry',
  service_unavailable: 'retry',
  internal_error: 'retry',
  fatal_error: 'retry',
  request_timeout: 'retry',
  team_added_to_org: 'retry',
  // What we sent or how we are set up is wrong: no retry fixes it.
  access_denied: 'give-up',
  missing_scope: 'give-up',
  deprecated_endpoint: 'give-up',
  method_deprecated: 'give-up',
  enterprise_is_restricted: 'give-up',
  ekm_access_denied: 'give-up',
  invalid_arg_name: 'give-up',
  invalid_arguments: 'give-up',
  invalid_array_arg: 'give-up',
  invalid_charset: 'give-up',
  invalid_form_data: 'give-up',
  invalid_post_type: 'give-up',
  missing_post_type: 'give-up',
  is_bot: 'give-up',
  no_permission: 'give-up',
  unknown_method: 'give-up',
};

const BY_METHOD: Readonly<Record<OutboxMethod, Table>> = {
  'chat.postMessage': {
    // The conversation cannot take our post: the rule's fallback takes it elsewhere.
    channel_not_found: 'fallback',
    not_in_channel: 'fallback',
    is_archived: 'fallback',
    no_permission: 'fallback',
    ekm_access_denied: 'fallback',
    restricted_action: 'fallback',
    restricted_action_read_only_channel: 'fallback',
    restricted_action_thread_only_channel: 'fallback',
    restricted_action_non_threadable_channel: 'fallback',
    restricted_action_thread_locked: 'fallback',
    cannot_reply_to_message: 'fallback',
    messages_tab_disabled: 'fallback',
    team_not_found: 'fallback',
    // Free workspaces' message limit: passes later.
    message_limit_exceeded: 'retry',
    rate_limited: 'retry',
    as_user_not_supported: 'give-up',
    duplicate_channel_not_found: 'give-up',
    duplicate_message_not_found: 'give-up',
    invalid_blocks: 'give-up',
    invalid_blocks_format: 'give-up',
    invalid_metadata_format: 'give-up',
    invalid_metadata_schema: 'give-up',
    markdown_text_conflict: 'give-up',
    metadata_must_be_sent_from_app: 'give-up',
    metadata_too_large: 'give-up',
    msg_blocks_too_long: 'give-up',
    msg_too_long: 'give-up',
    no_text: 'give-up',
    too_many_attachments: 'give-up',
    too_many_contact_cards: 'give-up',
    attachment_payload_limit_exceeded: 'give-up',
    missing_file_data: 'give-up',
    slack_connect_canvas_sharing_blocked: 'give-up',
    slack_connect_file_link_sharing_blocked: 'give-up',
    slack_connect_lists_sharing_blocked: 'give-up',
  },
  'chat.update': {
    // The message to edit is gone or can no longer be edited: an edit shows the latest state,
    // so there is nothing left to bring up to date.
    message_not_found: 'done',
    cant_update_message: 'done',
    edit_window_closed: 'done',
    is_inactive: 'done',
    channel_not_found: 'done',
    team_not_found: 'done',
    external_channel_migrating: 'retry',
    update_failed: 'retry',
    streaming_state_conflict: 'retry',
    as_user_not_supported: 'give-up',
    block_mismatch: 'give-up',
    cant_broadcast_message: 'give-up',
    invalid_attachments: 'give-up',
    invalid_blocks: 'give-up',
    invalid_blocks_format: 'give-up',
    invalid_metadata_format: 'give-up',
    invalid_metadata_schema: 'give-up',
    markdown_text_conflict: 'give-up',
    metadata_must_be_sent_from_app: 'give-up',
    metadata_too_large: 'give-up',
    msg_too_long: 'give-up',
    no_dual_broadcast_content_update: 'give-up',
    no_text: 'give-up',
    slack_connect_file_link_sharing_blocked: 'give-up',
    too_many_attachments: 'give-up',
  },
  // Only for a link in the approver's DM: without it the DM still goes out.
  'chat.getPermalink': { channel_not_found: 'done', message_not_found: 'done' },
  'conversations.open': {
    // The approver is deactivated, gone or hidden from the app.
    user_disabled: 'fallback',
    user_not_found: 'fallback',
    user_not_visible: 'fallback',
    channel_not_found: 'fallback',
    invalid_user_combination: 'fallback',
    method_not_supported_for_channel_type: 'give-up',
    not_enough_users: 'give-up',
    too_many_users: 'give-up',
    users_list_not_supplied: 'give-up',
  },
  // The search for an earlier post: a place the app cannot read holds no post it can find.
  'conversations.history': {
    channel_not_found: 'fallback',
    not_in_channel: 'fallback',
    channel_is_limited_access: 'fallback',
    missing_scope: 'fallback',
    invalid_cursor: 'retry',
    invalid_metadata_filter_keys: 'give-up',
    invalid_ts_latest: 'give-up',
    invalid_ts_oldest: 'give-up',
  },
  'conversations.replies': {
    channel_not_found: 'fallback',
    not_in_channel: 'fallback',
    thread_not_found: 'fallback',
    missing_scope: 'fallback',
    method_not_supported_for_channel_type: 'fallback',
    invalid_cursor: 'retry',
    list_record_comment_fetch_failed: 'retry',
    invalid_metadata_filter_keys: 'give-up',
    invalid_ts_latest: 'give-up',
    invalid_ts_oldest: 'give-up',
  },
  'users.info': {
    user_not_found: 'fallback',
    user_not_visible: 'fallback',
    too_many_users: 'give-up',
  },
  'users.lookupByEmail': { users_not_found: 'fallback', enterprise_is_restricted: 'give-up' },
  'functions.completeSuccess': {
    // Completed already (an earlier attempt got through although its answer was lost), or the
    // run is gone: nothing left to complete.
    execution_not_in_running_state: 'done',
    function_execution_not_found: 'done',
    parameter_validation_failed: 'give-up',
  },
  'functions.completeError': {
    execution_not_in_running_state: 'done',
    function_execution_not_found: 'done',
  },
  'auth.test': {},
};

/** Codes after which Slack may have carried the call out although it answered with an error. */
export const MAY_HAVE_TAKEN_EFFECT: ReadonlySet<string> = new Set([
  'fatal_error',
  'internal_error',
  'request_timeout',
]);

/** What the outbox does when `method` answers `code` (see the table above). */
export function classifySlackError(method: OutboxMethod, code: string): SlackErrorClass {
  return BY_METHOD[method][code] ?? EVERY_METHOD[code] ?? 'give-up';
}

/** The documented codes of a method, for tests that walk the table. */
export function documentedErrors(method: OutboxMethod): string[] {
  return [...new Set([...Object.keys(BY_METHOD[method]), ...Object.keys(EVERY_METHOD)])];
}
