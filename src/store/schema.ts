// Row types: what the tables hold. Times are epoch milliseconds, flags 0/1, so that
// SQLite and Postgres read back the same values.

export interface TrackedApprovalRow {
  djbh: string;
  team_id: string;
  channel_id: string;
  message_ts: string | null;
  requester_slack_id: string;
  requester_login: string;
  approver_login: string;
  approver_slack_id: string | null;
  title: string;
  note: string;
  decision: string;
  decided_by: string | null;
  tracking: string;
  locale: string;
  created_at: number;
  updated_at: number;
  last_checked_at: number | null;
  next_check_at: number;
  check_failures: number;
  lease_until: number | null;
  reminders_sent: number;
  last_reminded_at: number | null;
  unknown_since: number | null;
  thread_ts: string | null;
  function_execution_id: string | null;
  again_of: string | null;
  again_of_link: string | null;
  approver_unreachable_since: number | null;
  check_token: string | null;
  escalated_at: number | null;
  escalated_to_login: string | null;
  escalated_to_slack_id: string | null;
  /** The name of the template the request was made from; null when none. */
  template_name: string | null;
  /** The id of that template (removed or not); null when none, or recorded before ids were. */
  template_id: string | null;
  /** The approval that requested this one again (Request again was used); null until then. */
  requested_again_as: string | null;
  /** Where that approval's request message was posted; null until it was. */
  requested_again_channel: string | null;
  requested_again_ts: string | null;
  /** How many announcements of it the database has numbered (announcements.seq; a trigger's). */
  announcements_recorded: number;
  /** How many times the service gave it to someone else (0: the approver it was requested from). */
  approver_term: number;
  /** announcements.seq at the last handover: those above it are the current approver's. */
  approver_from_seq: number;
  /** When the current approver got it (the poll pass's clock); null: since it was requested. */
  approver_since: number | null;
  /** Who had it before the current approver, oldest first: JSON `[{ login, chatId }]`; null: nobody. */
  former_approvers: string | null;
  /** Until when it is checked every few seconds (its approver went to decide); null when not. */
  hot_until: number | null;
}

export interface RequestTemplateRow {
  id: string;
  channel_id: string;
  name: string;
  /** The name in lower case, single-spaced: unique among a channel's live templates. */
  name_key: string;
  title_prefix: string;
  note_skeleton: string;
  approver_slack_id: string | null;
  created_by: string;
  created_at: number;
  updated_by: string;
  updated_at: number;
  removed_by: string | null;
  removed_at: number | null;
  /** Added by 029: the steps after the form's approver, as JSON (steps.ts); null: none. */
  later_steps?: string | null;
}

export interface TemplateChangeRow {
  id: string;
  template_id: string;
  channel_id: string;
  name: string;
  action: string;
  changed_by: string;
  changed_at: number;
}

export interface AnnouncementRow {
  id: string;
  djbh: string;
  kind: string;
  decision: string | null;
  state: string;
  attempts: number;
  attempted_at: number | null;
  lease_until: number | null;
  sent_ts: string | null;
  last_error: string | null;
  created_at: number;
  occurrence: number | null;
  next_attempt_at: number;
  attempt_token: string | null;
  uncertain: number;
  sent_channel: string | null;
  first_attempted_at: number | null;
  redriven_at: number | null;
  /** How long the retry window stood still while delivery was paused (see resumeDelivery). */
  paused_ms: number;
  /** Until when Slack may still commit an earlier post whose outcome is unknown (database clock). */
  commit_horizon_at: number | null;
  /**
   * The conversation it goes to, as its lane (approvals/conversation.ts); null only for rows an
   * older release recorded, filled in before lanes are read.
   */
  lane_key: string | null;
  /**
   * Its place among its approval's announcements in the order the database recorded them (commit
   * order), numbered by the database itself (a trigger; see the migration `recorded-order`): the
   * order an approval's lanes deliver in.
   */
  seq: number | null;
}

/** Fleet-wide delivery state; the row `slack` holds the pause while Slack refuses the token. */
export interface DeliveryStateRow {
  id: string;
  paused_at: number | null;
  paused_reason: string | null;
  /** When the pause began, on the database's clock (how long it lasted is measured there). */
  paused_at_db: number | null;
}

/** Who serves a lane now, and when the lane may post next (both on the database's clock). */
export interface LaneLeaseRow {
  lane: string;
  token: string | null;
  lease_until: number | null;
  next_post_at: number;
}

export interface LinkedAccountRow {
  slack_user_id: string;
  team_id: string;
  login: string;
  name: string;
  linked_at: number;
}

export interface SubmissionKeyRow {
  key: string;
  taken_at: number;
}

export interface JobRunRow {
  name: string;
  next_run_at: number;
  lease_until: number | null;
}

export interface StepConfirmationRow {
  execution_id: string;
  team_id: string;
  requester_slack_id: string;
  started_by_slack_id: string | null;
  approver_slack_id: string | null;
  title: string;
  note: string;
  channel_id: string | null;
  locale: string;
  state: string;
  reason: string | null;
  created_at: number;
  expires_at: number;
  asked_channel: string | null;
  asked_ts: string | null;
  step_closed: number;
  /** When it was answered (Start, Decline); null while pending, and for rows older than this column. */
  answered_at: number | null;
  /** The digest of the title and note shown to the requester; null for older rows. */
  shown_digest: string | null;
  /** The steps after the first (StepRule[] as JSON); null for a step of one (and older rows). */
  later_steps?: string | null;
}

/** Delegates while away (approvals/delegation.ts); `from_key` is loginKey(from_login). */
export interface DelegationRow {
  from_key: string;
  from_login: string;
  to_login: string;
  until: number;
  set_at: number;
}

export interface Database {
  submission_keys: SubmissionKeyRow;
  tracked_approvals: TrackedApprovalRow;
  announcements: AnnouncementRow;
  linked_accounts: LinkedAccountRow;
  step_confirmations: StepConfirmationRow;
  job_runs: JobRunRow;
  delivery_state: DeliveryStateRow;
  lane_leases: LaneLeaseRow;
  request_templates: RequestTemplateRow;
  template_changes: TemplateChangeRow;
  delegations: DelegationRow;
  approval_chains: ApprovalChainRow;
  approval_chain_steps: ApprovalChainStepRow;
}

/** A request in several steps (approvals/steps.ts); `id` is its first step's number. */
export interface ApprovalChainRow {
  id: string;
  requester_login: string;
  title: string;
  note: string;
  locale: string;
  steps: number;
  outcome: string | null;
  created_at: number;
  ended_at: number | null;
}

/** One step of a chain; `djbh` once started; `claim`/`lease_until` while a worker starts it. */
export interface ApprovalChainStepRow {
  chain_id: string;
  position: number;
  /** The step's rule as JSON (steps.ts's StepRule). */
  rule: string;
  state: string;
  approver_login: string | null;
  djbh: string | null;
  decision: string | null;
  decided_by: string | null;
  skip_reason: string | null;
  claim: string | null;
  lease_until: number | null;
  updated_at: number;
}
