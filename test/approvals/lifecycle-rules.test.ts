import { describe, expect, it } from 'vitest';
import { type SeenStatus, whatTheCheckSaw } from '../../src/approvals/lifecycle/check-outcome.ts';
import { deliveryEvents } from '../../src/approvals/lifecycle/deliveries.ts';
import {
  followUpsDue,
  heldForWorkingHours,
  stillWorthReminding,
} from '../../src/approvals/lifecycle/reminders.ts';
import type { TrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { DEFAULT_WORKING_HOURS } from '../../src/approvals/working-hours.ts';
import { type Overrides, withOverrides } from '../helpers/approval-builder.ts';

// The rules that turn what happened into the lifecycle's events, table-driven: what a check saw,
// what a delivery tells, and the one place a reminder (or escalation) is decided.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// A Friday, 10:00 UTC: inside the default working hours.
const NOW = new Date('2026-11-27T10:00:00Z');
const NEXT = new Date(NOW.getTime() + 60_000);
const MARIA = 'maria.lopez@corp.example';
const ALEX = 'alex.kim@corp.example';

const approval: TrackedApproval = {
  djbh: 'A-1',
  teamId: 'T1',
  slack: { channelId: 'C0CHAN', messageTs: '1.1', threadTs: null, functionExecutionId: null },
  parties: {
    requester: { slackId: 'U0SAM', login: 'sam.taylor@corp.example' },
    approver: { login: MARIA, slackId: 'U0MARIA', term: 0, since: null, unreachableSince: null },
    formerApprovers: [],
  },
  request: {
    title: 't',
    note: 'n',
    locale: 'en',
    createdAt: new Date(NOW.getTime() - 2 * DAY),
    template: null,
    againOf: null,
    requestedAgainAs: null,
  },
  outcome: {
    decision: 'pending',
    decidedBy: null,
    tracking: 'active',
    changedAt: NOW,
    unknownSince: null,
  },
  followUp: { remindersSent: 0, lastRemindedAt: null, escalatedAt: null, escalatedTo: null },
};
const pending: SeenStatus = { decision: 'pending', ended: false, unknown: false };
const policy = { giveUpAfterMs: 30 * DAY, unknownForMs: DAY };

describe('whatTheCheckSaw', () => {
  const rows: Array<{
    name: string;
    approval?: Overrides<TrackedApproval>;
    status: SeenStatus;
    expected: ReturnType<typeof whatTheCheckSaw>;
  }> = [
    { name: 'nothing new', status: pending, expected: { kind: 'still-pending', unknown: false } },
    {
      name: 'a decision, credited to whom the service names',
      status: { decision: 'approved', ended: true, unknown: false, approver: ALEX },
      expected: {
        kind: 'decided',
        decision: 'approved',
        decidedBy: ALEX,
        ended: true,
        nextCheckAt: NEXT,
      },
    },
    {
      name: 'a decision, credited to the approver when the service names nobody',
      status: { decision: 'rejected', ended: false, unknown: false },
      expected: {
        kind: 'decided',
        decision: 'rejected',
        decidedBy: MARIA,
        ended: false,
        nextCheckAt: NEXT,
      },
    },
    {
      name: 'a decision counts even past the give-up age',
      approval: { request: { createdAt: new Date(NOW.getTime() - 40 * DAY) } },
      status: { decision: 'approved', ended: false, unknown: false },
      expected: {
        kind: 'decided',
        decision: 'approved',
        decidedBy: MARIA,
        ended: false,
        nextCheckAt: NEXT,
      },
    },
    {
      name: 'closed without a decision',
      status: { ...pending, ended: true },
      expected: { kind: 'closed', reason: 'ended' },
    },
    {
      name: 'unknown for less than a day: still followed',
      approval: { outcome: { unknownSince: new Date(NOW.getTime() - HOUR) } },
      status: { ...pending, unknown: true },
      expected: { kind: 'still-pending', unknown: true },
    },
    {
      name: 'unknown for a day: vanished',
      approval: { outcome: { unknownSince: new Date(NOW.getTime() - DAY) } },
      status: { ...pending, unknown: true },
      expected: { kind: 'closed', reason: 'vanished' },
    },
    {
      name: 'nobody decided in 30 days: given up',
      approval: { request: { createdAt: new Date(NOW.getTime() - 30 * DAY) } },
      status: pending,
      expected: { kind: 'gave-up' },
    },
    {
      name: 'the service names someone else: handed over',
      status: { ...pending, approver: ALEX },
      expected: {
        kind: 'handed-over',
        handover: {
          fromTerm: 0,
          to: { login: ALEX, chatId: null },
          former: [{ login: MARIA, chatId: 'U0MARIA' }],
        },
        nextCheckAt: NEXT,
      },
    },
    {
      name: 'the service names the approver, spelled otherwise: nothing new',
      status: { ...pending, approver: 'Maria.Lopez@CORP.example' },
      expected: { kind: 'still-pending', unknown: false },
    },
  ];
  it.each(rows)('$name', (row) => {
    expect(
      whatTheCheckSaw(withOverrides(approval, row.approval), row.status, policy, NOW, NEXT),
    ).toEqual(row.expected);
  });
});

describe('followUpsDue: where a reminder is decided', () => {
  const reminders = { afterMs: DAY, intervalMs: DAY, max: 3 };
  const escalation = { afterReminders: 2, answerWithinMs: DAY };
  const rows: Array<{
    name: string;
    approval?: Overrides<TrackedApproval>;
    status?: SeenStatus;
    withReminders?: boolean;
    expected: { reminder?: number; escalation: boolean };
  }> = [
    {
      name: 'the first reminder, a day after the request',
      expected: { reminder: 1, escalation: false },
    },
    {
      name: 'none before a day has passed',
      approval: { request: { createdAt: new Date(NOW.getTime() - HOUR) } },
      expected: { escalation: false },
    },
    {
      name: 'none without reminders configured',
      withReminders: false,
      expected: { escalation: false },
    },
    {
      name: 'none to an approver Slack said cannot be reached',
      approval: { parties: { approver: { unreachableSince: new Date(NOW.getTime() - HOUR) } } },
      expected: { escalation: false },
    },
    {
      name: 'none while the service does not know the number',
      status: { ...pending, unknown: true },
      expected: { escalation: false },
    },
    {
      name: 'none within the interval after the last one',
      approval: { followUp: { remindersSent: 1, lastRemindedAt: new Date(NOW.getTime() - HOUR) } },
      expected: { escalation: false },
    },
    {
      name: 'none after the last of them; escalation due once two went unanswered',
      approval: { followUp: { remindersSent: 3, lastRemindedAt: new Date(NOW.getTime() - DAY) } },
      expected: { escalation: true },
    },
    {
      name: 'the second reminder and the escalation are independent',
      approval: { followUp: { remindersSent: 2, lastRemindedAt: new Date(NOW.getTime() - DAY) } },
      expected: { reminder: 3, escalation: true },
    },
    {
      name: 'no escalation once escalated',
      approval: {
        followUp: {
          remindersSent: 3,
          lastRemindedAt: new Date(NOW.getTime() - DAY),
          escalatedAt: new Date(NOW.getTime() - HOUR),
        },
      },
      expected: { escalation: false },
    },
    {
      name: 'no escalation when the service names another approver (a handover comes first)',
      approval: { followUp: { remindersSent: 3, lastRemindedAt: new Date(NOW.getTime() - DAY) } },
      status: { ...pending, approver: ALEX },
      expected: { escalation: false },
    },
  ];
  it.each(rows)('$name', (row) => {
    const followUps = {
      ...(row.withReminders === false ? {} : { reminders }),
      escalation,
    };
    expect(
      followUpsDue(withOverrides(approval, row.approval), row.status ?? pending, followUps, NOW),
    ).toEqual(row.expected);
  });

  it('asks the same rule as a reminder goes out: pending, followed and reachable', () => {
    expect(stillWorthReminding(approval)).toBe(true);
    expect(
      stillWorthReminding(withOverrides(approval, { outcome: { decision: 'approved' } })),
    ).toBe(false);
    expect(stillWorthReminding(withOverrides(approval, { outcome: { tracking: 'gave-up' } }))).toBe(
      false,
    );
    expect(
      stillWorthReminding(
        withOverrides(approval, { parties: { approver: { unreachableSince: NOW } } }),
      ),
    ).toBe(false);
  });

  it('holds what is due outside the approver’s working hours until their next start', () => {
    const withHours = { workingHours: DEFAULT_WORKING_HOURS };
    expect(heldForWorkingHours(NOW, 'UTC', withHours, HOUR)).toBe(undefined);
    // 10:00 UTC on a Friday is 19:00 in Tokyo: held until Monday 09:00 there.
    expect(heldForWorkingHours(NOW, 'Asia/Tokyo', withHours, HOUR)).toEqual(
      new Date('2026-11-30T00:00:00Z'),
    );
    expect(heldForWorkingHours(NOW, 'Asia/Tokyo', {}, HOUR)).toBe(undefined);
    const noDay = { workingHours: { ...DEFAULT_WORKING_HOURS, days: [] } };
    expect(heldForWorkingHours(NOW, 'UTC', noDay, HOUR)).toEqual(new Date(NOW.getTime() + HOUR));
  });
});

describe('deliveryEvents', () => {
  const rows: Array<{
    name: string;
    announcement: Parameters<typeof deliveryEvents>[0];
    posted: Parameters<typeof deliveryEvents>[1];
    expected: ReturnType<typeof deliveryEvents>;
  }> = [
    {
      name: 'a thread reply delivered tells nothing new',
      announcement: { kind: 'decision', seq: 5 },
      posted: { channel: 'C0CHAN', ts: '2.2' },
      expected: [],
    },
    {
      name: 'the request posted: where it is now',
      announcement: { kind: 'request', seq: 1 },
      posted: { channel: 'C0CHAN', ts: '1.1' },
      expected: [{ kind: 'request-posted', channel: 'C0CHAN', ts: '1.1' }],
    },
    {
      name: 'the request delivered as posting nothing: not posted',
      announcement: { kind: 'request', seq: 1 },
      posted: { channel: '', ts: '' },
      expected: [],
    },
    {
      name: 'the approver’s DM found them unreachable',
      announcement: { kind: 'approver-dm', seq: 2 },
      posted: { channel: '', ts: '', approverUnreachable: true },
      expected: [{ kind: 'approver-unreachable', seq: 2 }],
    },
    {
      name: 'the approver’s DM found the account of whom it was handed to',
      announcement: { kind: 'approver-dm', seq: 7 },
      posted: { channel: 'D0ALEX', ts: '3.3', approverChatId: 'U0ALEX' },
      expected: [{ kind: 'approver-found', seq: 7, chatId: 'U0ALEX' }],
    },
  ];
  it.each(rows)('$name', ({ announcement, posted, expected }) => {
    expect(deliveryEvents(announcement, posted)).toEqual(expected);
  });
});
