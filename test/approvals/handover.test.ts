import { describe, expect, it } from 'vitest';
import { reminderDue } from '../../src/approvals/check-schedule.ts';
import { handoverOf } from '../../src/approvals/handover.ts';
import { trackedApproval, withOverrides } from '../helpers/approval-builder.ts';

// Whether a check's status hands the approval to someone else, by the one rule for logins.

const MARIA = { login: 'maria.lopez@corp.example', chatId: 'U0MARIA' };
const recorded = trackedApproval('A-1', {
  parties: {
    approver: { login: MARIA.login, slackId: MARIA.chatId, term: 0 },
    formerApprovers: [],
  },
  outcome: { decision: 'pending' as const, tracking: 'active' as const },
});
const pending = { decision: 'pending', unknown: false, ended: false };

describe('handoverOf', () => {
  it('finds none while the service names the recorded approver, however it spells the login', () => {
    expect(handoverOf(recorded, { ...pending, approver: 'Maria.Lopez@corp.example' })).toBe(
      undefined,
    );
    // Older services name nobody: nothing to compare.
    expect(handoverOf(recorded, pending)).toBe(undefined);
  });

  it('finds none for an approval decided, ended or unknown to the service', () => {
    const alex = 'alex.kim@corp.example';
    expect(handoverOf(recorded, { ...pending, decision: 'approved', approver: alex })).toBe(
      undefined,
    );
    expect(handoverOf(recorded, { ...pending, ended: true, approver: alex })).toBe(undefined);
    expect(handoverOf(recorded, { ...pending, unknown: true, approver: alex })).toBe(undefined);
  });

  it('hands it to the one the service names, with the recorded approver among those before', () => {
    expect(handoverOf(recorded, { ...pending, approver: 'alex.kim@corp.example' })).toEqual({
      fromTerm: 0,
      to: { login: 'alex.kim@corp.example', chatId: null },
      former: [MARIA],
    });
  });

  it('hands it back to someone who had it before with their Slack account, once in the list', () => {
    const withAlex = withOverrides(recorded, {
      parties: {
        approver: { login: 'alex.kim@corp.example', slackId: 'U0ALEX', term: 1 },
        formerApprovers: [MARIA],
      },
    });
    expect(handoverOf(withAlex, { ...pending, approver: 'MARIA.lopez@corp.example' })).toEqual({
      fromTerm: 1,
      to: { login: 'MARIA.lopez@corp.example', chatId: 'U0MARIA' },
      former: [{ login: 'alex.kim@corp.example', chatId: 'U0ALEX' }],
    });
  });
});

describe('reminderDue after a handover', () => {
  const options = { afterMs: 3_600_000, intervalMs: 3_600_000, max: 3 };
  const createdAt = new Date('2026-11-20T09:00:00Z');

  it('counts the new approver’s first reminder from when they got it, not from the request', () => {
    const approverSince = new Date('2026-11-21T09:00:00Z');
    const approval = { createdAt, approverSince, remindersSent: 0, lastRemindedAt: null };
    expect(reminderDue(approval, new Date('2026-11-21T09:30:00Z'), options)).toBe(undefined);
    expect(reminderDue(approval, new Date('2026-11-21T10:00:00Z'), options)).toBe(1);
  });
});
