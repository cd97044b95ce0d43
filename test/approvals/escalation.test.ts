import { describe, expect, it } from 'vitest';
import type { Department } from '../../src/approvals/approval-types.ts';
import {
  escalatedOnlyTo,
  escalationDue,
  escalationTarget,
} from '../../src/approvals/escalation.ts';
import { trackedApproval, withOverrides } from '../helpers/approval-builder.ts';

const T0 = new Date('2026-11-25T09:00:00Z');
const HOUR = 3_600_000;
const at = (hours: number) => new Date(T0.getTime() + hours * HOUR);

const pending = trackedApproval('A-1', {
  parties: { approver: { login: 'liu.yang@corp.example', unreachableSince: null } },
  outcome: { decision: 'pending' as const, tracking: 'active' as const },
  followUp: { escalatedAt: null, remindersSent: 2, lastRemindedAt: at(48) },
});
const options = { afterReminders: 2, answerWithinMs: 24 * HOUR };

describe('escalationDue', () => {
  it('is due once the last of N reminders had a full interval to be answered', () => {
    expect(escalationDue(pending, at(71), options)).toBe(false);
    expect(escalationDue(pending, at(72), options)).toBe(true);
    expect(
      escalationDue(withOverrides(pending, { followUp: { remindersSent: 3 } }), at(72), options),
    ).toBe(true);
  });

  it('is never due when off, too few reminders, escalated already, over, or the approver unreachable', () => {
    const now = at(100);
    expect(escalationDue(pending, now, { ...options, afterReminders: 0 })).toBe(false);
    expect(
      escalationDue(withOverrides(pending, { followUp: { remindersSent: 1 } }), now, options),
    ).toBe(false);
    expect(
      escalationDue(withOverrides(pending, { followUp: { escalatedAt: at(80) } }), now, options),
    ).toBe(false);
    expect(
      escalationDue(withOverrides(pending, { outcome: { decision: 'rejected' } }), now, options),
    ).toBe(false);
    expect(
      escalationDue(withOverrides(pending, { outcome: { tracking: 'gave-up' } }), now, options),
    ).toBe(false);
    expect(
      escalationDue(
        withOverrides(pending, { parties: { approver: { unreachableSince: at(1) } } }),
        now,
        options,
      ),
    ).toBe(false);
  });

  it('is not due while the service names another approver than the one it was requested from', () => {
    const now = at(100);
    // Given to Maria by the service's administrators: Liu's reminders say nothing about her.
    expect(escalationDue(pending, now, options, 'maria.lopez@corp.example')).toBe(false);
    // The same person, however the service spells the login; or a service that names nobody.
    expect(escalationDue(pending, now, options, 'Liu.Yang@Corp.Example')).toBe(true);
    expect(escalationDue(pending, now, options, undefined)).toBe(true);
  });
});

/** A department lookup like the service's: one leader reported at every level. */
function chain(leaders: Record<string, string>) {
  const asked: string[] = [];
  return {
    asked,
    service: {
      async getDepartment(login: string): Promise<Department> {
        asked.push(login);
        const leader = leaders[login] ?? '';
        return {
          login,
          name: login,
          mobile: '',
          productLine: 'P',
          department: 'D',
          subDepartment: 'S',
          leaders: { subDepartment: leader, department: leader, productLine: leader },
        };
      },
    },
  };
}

const onChat: Record<string, string> = {
  boss: 'U0BOSS',
  top: 'U0TOP',
  req: 'U0REQ',
  appr: 'U0APPR',
};
const findChatUser = async (login: string) => onChat[login] ?? null;
const approval = trackedApproval('A-1', {
  parties: {
    approver: { login: 'appr', slackId: 'U0APPR' },
    requester: { login: 'req', slackId: 'U0REQ' },
  },
});

describe('escalationTarget', () => {
  it('is the approver’s own leader', async () => {
    const { service } = chain({ appr: 'boss', boss: 'top' });
    expect(await escalationTarget({ service, findChatUser }, approval)).toEqual({
      login: 'boss',
      chatId: 'U0BOSS',
    });
  });

  it('goes past the requester, and past a leader not on the chat or away, to the next one up', async () => {
    expect(
      await escalationTarget(
        { service: chain({ appr: 'req', req: 'top' }).service, findChatUser },
        approval,
      ),
    ).toEqual({ login: 'top', chatId: 'U0TOP' });
    expect(
      await escalationTarget(
        { service: chain({ appr: 'ghost', ghost: 'top' }).service, findChatUser },
        approval,
      ),
    ).toEqual({ login: 'top', chatId: 'U0TOP' });
    expect(
      await escalationTarget(
        {
          service: chain({ appr: 'boss', boss: 'top' }).service,
          findChatUser,
          awayOf: async (id) => (id === 'U0BOSS' ? { reason: 'deactivated' } : null),
        },
        approval,
      ),
    ).toEqual({ login: 'top', chatId: 'U0TOP' });
  });

  it('never picks the requester by chat account either (a linked login)', async () => {
    const { service } = chain({ appr: 'req.other', 'req.other': 'top' });
    const linked = async (login: string) => (login === 'req.other' ? 'U0REQ' : findChatUser(login));
    expect(await escalationTarget({ service, findChatUser: linked }, approval)).toEqual({
      login: 'top',
      chatId: 'U0TOP',
    });
  });

  it('knows the requester and the approver by their accounts now, not by those recorded as it started', async () => {
    // The approver's recorded account is the leader's (a link made by mistake, since removed).
    const stale = withOverrides(approval, { parties: { approver: { slackId: 'U0BOSS' } } });
    const { service } = chain({ appr: 'boss', boss: 'top' });
    expect(await escalationTarget({ service, findChatUser }, stale)).toEqual({
      login: 'boss',
      chatId: 'U0BOSS',
    });
  });

  it('is nobody at the top of the chain, or when only the requester is above', async () => {
    expect(await escalationTarget({ service: chain({}).service, findChatUser }, approval)).toBe(
      undefined,
    );
    expect(
      await escalationTarget({ service: chain({ appr: 'req' }).service, findChatUser }, approval),
    ).toBe(undefined);
    // A loop in the directory ends the walk rather than going round.
    const loop = chain({ appr: 'ghost', ghost: 'appr' });
    expect(await escalationTarget({ service: loop.service, findChatUser }, approval)).toBe(
      undefined,
    );
    expect(loop.asked.length).toBeLessThanOrEqual(4);
  });

  it('rejects when the service cannot answer, so the next check asks again', async () => {
    const service = {
      getDepartment: async () => {
        throw new Error('service down');
      },
    };
    await expect(escalationTarget({ service, findChatUser }, approval)).rejects.toThrow(
      'service down',
    );
  });
});

describe('escalatedOnlyTo', () => {
  const LIU = 'liu.yang@corp.example';
  const PRIYA = 'priya.nair@corp.example';
  const escalated = trackedApproval('A-1', {
    parties: { approver: { login: LIU } },
    followUp: { escalatedTo: { login: PRIYA, chatId: 'U0PRIYA' } },
  });
  it.each([
    ['the leader it was escalated to', escalated, PRIYA, true],
    ['the leader, spelled otherwise', escalated, 'Priya.Nair@corp.example', true],
    ['its approver', escalated, LIU, false],
    ['someone else', escalated, 'sam.taylor@corp.example', false],
    ['nobody (no login)', escalated, null, false],
    [
      'the leader of one not escalated',
      trackedApproval('A-1', {
        parties: { approver: { login: LIU } },
        followUp: { escalatedTo: null },
      }),
      PRIYA,
      false,
    ],
    [
      'an approver it was escalated to as well',
      trackedApproval('A-1', {
        parties: { approver: { login: PRIYA } },
        followUp: { escalatedTo: { login: PRIYA, chatId: 'U0PRIYA' } },
      }),
      PRIYA,
      false,
    ],
  ])('is true for %s only when it waits for another approver', (_, approval, login, expected) => {
    expect(escalatedOnlyTo(approval, login)).toBe(expected);
  });
});
