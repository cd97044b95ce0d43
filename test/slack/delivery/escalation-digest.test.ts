import { describe, expect, it } from 'vitest';
import type { TrackedApproval } from '../../../src/approvals/tracked-approval.ts';
import type { DeliveryKit } from '../../../src/slack/delivery/delivery-kit.ts';
import { escalationsOfTheDay } from '../../../src/slack/delivery/handlers/escalation-digest.ts';
import type { Reader } from '../../../src/slack/delivery/poster.ts';
import { type Overrides, trackedApproval, withOverrides } from '../../helpers/approval-builder.ts';

// A leader's escalation digest lists only approvals escalated to them that pass the poster's
// audience check (WHO_MAY) each on its own, and counts only those: the handler's side, with the
// poster and the store stood in for (the whole flow is test/slack/escalation.test.ts).

const LEADER: Reader = { chatId: 'ULEAD', login: 'chen.hao@corp.example' };
const at = new Date('2026-11-25T01:15:00Z');

function approval(djbh: string, over: Overrides<TrackedApproval> = {}): TrackedApproval {
  return withOverrides(
    trackedApproval(djbh, {
      parties: {
        requester: { slackId: 'USAM', login: 'sam.taylor@corp.example' },
        approver: { login: 'maria.lopez@corp.example', slackId: 'UMARIA' },
      },
      request: {
        title: `Title of ${djbh}`,
        createdAt: new Date(at.getTime() - 3 * 86_400_000),
      },
      outcome: { changedAt: at },
      followUp: {
        remindersSent: 2,
        escalatedAt: at,
        escalatedTo: { login: LEADER.login, chatId: LEADER.chatId },
      },
    }),
    over,
  );
}

function kitWith(waiting: TrackedApproval[], hidden: Set<string>): DeliveryKit {
  const kit = {
    options: {
      digest: {
        waitingFor: async () => ({ approvals: waiting, total: waiting.length }),
        lastReminderPost: async () => undefined,
        lastEscalationPost: async () => undefined,
      },
    },
    poster: {
      permalink: async () => undefined,
      mayShow: async (_reader: Reader, a: TrackedApproval) => !hidden.has(a.djbh),
    },
    readers: {
      personOf: async (_attempt: unknown, a: TrackedApproval) => ({
        chatId: a.parties.approver.slackId,
        login: a.parties.approver.login,
      }),
      timeZoneOf: async () => undefined,
    },
    waitedMs: () => undefined,
  };
  return kit as unknown as DeliveryKit;
}

const attempt = { check() {} };
const escalation = (djbh: string) =>
  ({ id: `${djbh}:escalation`, djbh, kind: 'escalation', createdAt: at }) as never;

describe('a leader’s escalations together', () => {
  it('lists and counts only approvals escalated to the leader that the audience check lets them see', async () => {
    const waiting = [
      approval('A1'),
      approval('A2'),
      // One the audience check refuses this leader: neither named nor counted.
      approval('HIDDEN'),
      // One the leader approves: their reminder digest's, not this one's.
      approval('OWN', {
        parties: { approver: { login: LEADER.login } },
        followUp: { escalatedTo: null, escalatedAt: null },
      }),
    ];
    const day = await escalationsOfTheDay(
      kitWith(waiting, new Set(['HIDDEN'])),
      attempt,
      escalation('A1'),
      LEADER,
      { timeZone: 'Asia/Shanghai', locale: 'en-US' },
    );
    expect(day.as).toBe('digest');
    if (day.as !== 'digest') return;
    const body = JSON.stringify(day.message);
    expect(day.message.text).toContain('2 approvals were escalated to you');
    expect(body).toContain('Title of A1');
    expect(body).toContain('Title of A2');
    expect(body).not.toContain('HIDDEN');
    expect(body).not.toContain('Title of OWN');
    expect(body.match(/waiting for <@UMARIA> for 3 days/g)).toHaveLength(2);
  });

  it('tells the leader of one visible approval alone: the usual escalation DM', async () => {
    const day = await escalationsOfTheDay(
      kitWith([approval('A1'), approval('HIDDEN')], new Set(['HIDDEN'])),
      attempt,
      escalation('A1'),
      LEADER,
      { timeZone: undefined, locale: 'en-US' },
    );
    expect(day).toEqual({ as: 'single' });
  });
});
