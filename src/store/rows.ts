import type { Decision } from '../approvals/approval-types.ts';
import type { Person } from '../approvals/person.ts';
import type {
  Announcement,
  AnnouncementKind,
  TrackedApproval,
  Tracking,
} from '../approvals/tracked-approval.ts';
import type { AnnouncementRow, TrackedApprovalRow } from './schema.ts';

/*
 * Rows and domain types are separate, each converted in one function. Here, not beside either
 * store, because both read both: the outbox hands out each announcement with its approval, and
 * recording an approval's facts queues its announcements.
 */

export function toApproval(row: TrackedApprovalRow): TrackedApproval {
  return {
    djbh: row.djbh,
    teamId: row.team_id,
    channelId: row.channel_id,
    messageTs: row.message_ts,
    threadTs: row.thread_ts,
    functionExecutionId: row.function_execution_id,
    againOf: row.again_of,
    againOfLink: row.again_of_link,
    templateName: row.template_name,
    templateId: row.template_id,
    requestedAgainAs: row.requested_again_as
      ? {
          djbh: row.requested_again_as,
          message:
            row.requested_again_channel && row.requested_again_ts
              ? { channelId: row.requested_again_channel, ts: row.requested_again_ts }
              : null,
        }
      : null,
    requesterSlackId: row.requester_slack_id,
    requesterLogin: row.requester_login,
    approverLogin: row.approver_login,
    approverSlackId: row.approver_slack_id,
    approverTerm: Number(row.approver_term ?? 0),
    approverSince: row.approver_since == null ? null : new Date(Number(row.approver_since)),
    formerApprovers: row.former_approvers ? (JSON.parse(row.former_approvers) as Person[]) : [],
    title: row.title,
    note: row.note,
    decision: row.decision as Decision,
    decidedBy: row.decided_by,
    tracking: row.tracking as Tracking,
    locale: row.locale,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    lastCheckedAt: row.last_checked_at === null ? null : new Date(row.last_checked_at),
    nextCheckAt: new Date(row.next_check_at),
    hotUntil: row.hot_until == null ? null : new Date(Number(row.hot_until)),
    checkFailures: row.check_failures,
    remindersSent: row.reminders_sent,
    lastRemindedAt: row.last_reminded_at === null ? null : new Date(row.last_reminded_at),
    unknownSince: row.unknown_since === null ? null : new Date(Number(row.unknown_since)),
    checkClaim: row.check_token,
    approverUnreachableSince:
      row.approver_unreachable_since === null
        ? null
        : new Date(Number(row.approver_unreachable_since)),
    escalatedAt: row.escalated_at === null ? null : new Date(Number(row.escalated_at)),
    escalatedTo:
      row.escalated_to_login !== null && row.escalated_to_slack_id !== null
        ? { login: row.escalated_to_login, chatId: row.escalated_to_slack_id }
        : null,
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
