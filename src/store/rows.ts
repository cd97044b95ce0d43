import type { ApprovalSchedule, ClaimedApproval } from '../approvals/approval-repository.ts';
import type { Decision } from '../approvals/approval-types.ts';
import type { Person } from '../approvals/person.ts';
import type {
  Announcement,
  AnnouncementKind,
  NewTrackedApproval,
  TrackedApproval,
  Tracking,
} from '../approvals/tracked-approval.ts';
import type { AnnouncementRow, TrackedApprovalRow } from './schema.ts';

/*
 * Rows and domain types are separate, each converted in one function. Here, not beside either
 * store, because both read both: the outbox hands out each announcement with its approval, and
 * recording an approval's facts queues its announcements.
 */

/** The domain's approval of a row; what the store keeps for its checks is toSchedule's. */
export function toApproval(row: TrackedApprovalRow): TrackedApproval {
  return {
    djbh: row.djbh,
    teamId: row.team_id,
    request: {
      title: row.title,
      note: row.note,
      locale: row.locale,
      createdAt: new Date(row.created_at),
      // Both or neither, as an approval starts; an id alone (never written so) keeps its id.
      template:
        row.template_name === null && row.template_id === null
          ? null
          : { id: row.template_id, name: row.template_name ?? '' },
      againOf: row.again_of === null ? null : { djbh: row.again_of, link: row.again_of_link },
      requestedAgainAs: row.requested_again_as
        ? {
            djbh: row.requested_again_as,
            message:
              row.requested_again_channel && row.requested_again_ts
                ? { channelId: row.requested_again_channel, ts: row.requested_again_ts }
                : null,
          }
        : null,
    },
    parties: {
      requester: { login: row.requester_login, slackId: row.requester_slack_id },
      approver: {
        login: row.approver_login,
        slackId: row.approver_slack_id,
        term: Number(row.approver_term ?? 0),
        since: dateOrNull(row.approver_since),
        unreachableSince: dateOrNull(row.approver_unreachable_since),
      },
      formerApprovers: row.former_approvers ? (JSON.parse(row.former_approvers) as Person[]) : [],
    },
    outcome: {
      decision: row.decision as Decision,
      decidedBy: row.decided_by,
      tracking: row.tracking as Tracking,
      unknownSince: dateOrNull(row.unknown_since),
      changedAt: new Date(row.updated_at),
    },
    followUp: {
      remindersSent: row.reminders_sent,
      lastRemindedAt: dateOrNull(row.last_reminded_at),
      escalatedAt: dateOrNull(row.escalated_at),
      escalatedTo:
        row.escalated_to_login !== null && row.escalated_to_slack_id !== null
          ? { login: row.escalated_to_login, chatId: row.escalated_to_slack_id }
          : null,
    },
    slack: {
      channelId: row.channel_id,
      messageTs: row.message_ts,
      threadTs: row.thread_ts,
      functionExecutionId: row.function_execution_id,
    },
  };
}

/** When the poller looks at the row's approval next, and how its checks went. */
export function toSchedule(row: TrackedApprovalRow): ApprovalSchedule {
  return {
    nextCheckAt: new Date(row.next_check_at),
    lastCheckedAt: dateOrNull(row.last_checked_at),
    checkFailures: row.check_failures,
    hotUntil: dateOrNull(row.hot_until),
  };
}

/** A row a poll pass claimed: its approval, its schedule and the pass's claim on it. */
export function toClaimedApproval(row: TrackedApprovalRow): ClaimedApproval {
  return { approval: toApproval(row), schedule: toSchedule(row), claim: row.check_token };
}

/** The row of an approval that starts: pending, followed, due now, with nothing sent yet. */
export function newApprovalRow(a: NewTrackedApproval, now: Date): TrackedApprovalRow {
  const { request, parties, slack } = a;
  return {
    djbh: a.djbh,
    team_id: a.teamId,
    channel_id: slack.channelId,
    message_ts: null,
    thread_ts: slack.threadTs ?? null,
    function_execution_id: slack.functionExecutionId ?? null,
    again_of: request.againOf?.djbh ?? null,
    again_of_link: request.againOf?.link ?? null,
    template_name: request.template?.name ?? null,
    template_id: request.template?.id ?? null,
    requested_again_as: null,
    requested_again_channel: null,
    requested_again_ts: null,
    requester_slack_id: parties.requester.slackId,
    requester_login: parties.requester.login,
    approver_login: parties.approver.login,
    approver_slack_id: parties.approver.slackId,
    title: request.title,
    note: request.note,
    decision: 'pending',
    decided_by: null,
    tracking: 'active',
    locale: request.locale,
    created_at: request.createdAt.getTime(),
    updated_at: now.getTime(),
    last_checked_at: null,
    next_check_at: now.getTime(),
    check_failures: 0,
    lease_until: null,
    reminders_sent: 0,
    last_reminded_at: null,
    unknown_since: null,
    approver_unreachable_since: null,
    check_token: null,
    escalated_at: null,
    escalated_to_login: null,
    escalated_to_slack_id: null,
    // Numbered by the database as their announcements are recorded (see announcements.seq).
    announcements_recorded: 0,
    approver_term: 0,
    approver_from_seq: 0,
    approver_since: null,
    former_approvers: null,
    hot_until: null,
  };
}

export function toAnnouncement(row: AnnouncementRow): Announcement {
  return {
    id: row.id,
    djbh: row.djbh,
    kind: row.kind as AnnouncementKind,
    decision: row.decision as Decision | null,
    occurrence: row.occurrence,
    state: row.state as Announcement['state'],
    attempts: row.attempts,
    attemptedAt: row.attempted_at === null ? null : new Date(Number(row.attempted_at)),
    uncertain: Number(row.uncertain) === 1,
    nextAttemptAt: new Date(Number(row.next_attempt_at)),
    firstAttemptedAt:
      row.first_attempted_at === null ? null : new Date(Number(row.first_attempted_at)),
    redrivenAt: row.redriven_at === null ? null : new Date(Number(row.redriven_at)),
    pausedMs: Number(row.paused_ms ?? 0),
    sentChannel: row.sent_channel,
    sentTs: row.sent_ts,
    lastError: row.last_error,
    createdAt: new Date(Number(row.created_at)),
  };
}

/** Epoch milliseconds as a date (some drivers give bigint columns as strings); null stays null. */
function dateOrNull(ms: number | string | null | undefined): Date | null {
  return ms == null ? null : new Date(Number(ms));
}
