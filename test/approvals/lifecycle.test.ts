import { describe, expect, it } from 'vitest';
import type { LifecycleEvent } from '../../src/approvals/lifecycle/events.ts';
import {
  type At,
  type Facts,
  type LifecycleApproval,
  retentionTransition,
  type Transition,
  transition,
} from '../../src/approvals/lifecycle/transition.ts';
import { withOverrides } from '../helpers/approval-builder.ts';

// Every event's transition, table-driven and without a database: what changes, the fence the
// store must verify, and the announcements recorded (kind and what names the fact). The store's
// own tests check that it applies these (test/store/approval-repository.test.ts, outbox-store).

const NOW = new Date('2026-11-27T09:00:00Z');
const NEXT = new Date('2026-11-27T09:10:00Z');
const MARIA = { login: 'maria.lopez@corp.example', chatId: 'U0MARIA' };
const ALEX = { login: 'alex.kim@corp.example', chatId: null };
const LEADER = { login: 'lee.boss@corp.example', chatId: 'U0LEE' };

const base: LifecycleApproval = {
  djbh: 'A-1',
  request: { againOf: null },
  slack: { channelId: 'C0CHAN', threadTs: null, functionExecutionId: null },
  parties: {
    approver: { login: MARIA.login, slackId: MARIA.chatId, term: 0 },
    formerApprovers: [],
  },
};
const fromWorkflow = withOverrides(base, { slack: { functionExecutionId: 'Fx1' } });
const requestedAgain = withOverrides(base, { request: { againOf: { djbh: 'A-0' } } });
const handedOnce = withOverrides(base, {
  parties: { approver: { login: ALEX.login, slackId: null, term: 1 } },
});
const inThread = withOverrides(base, { slack: { threadTs: '111.222' } });

const claimed: At = { now: NOW, claim: 'claim-1' };
const unclaimed: At = { now: NOW };
const CLAIM = { kind: 'claim-held', claim: 'claim-1' } as const;

interface Row {
  name: string;
  approval: LifecycleApproval;
  event: LifecycleEvent;
  at?: At;
  facts?: Facts;
  expected: Transition;
}

const closing = (
  why: 'ended' | 'vanished' | 'gave-up',
  tracking: 'finished' | 'gave-up',
): Transition => ({
  change: { tracking, updatedAt: NOW, endsClaim: true as const },
  fence: [CLAIM],
  announcements: [{ kind: why }, { kind: 'parent-update', detail: why }],
});

const table: Row[] = [
  {
    name: 'started: the request, then the approver’s DM',
    approval: base,
    event: { kind: 'started' },
    expected: {
      change: {},
      fence: [],
      announcements: [{ kind: 'request' }, { kind: 'approver-dm' }],
      follows: [],
    },
  },
  {
    name: 'started by Request again: the old approval is used up in the same transaction',
    approval: requestedAgain,
    event: { kind: 'started' },
    expected: {
      change: {},
      fence: [],
      announcements: [{ kind: 'request' }, { kind: 'approver-dm' }],
      follows: [{ djbh: 'A-0', event: { kind: 'requested-again', as: 'A-1' } }],
    },
  },
  {
    name: 'requested again: once, and the old request message drops its button',
    approval: base,
    event: { kind: 'requested-again', as: 'A-2' },
    expected: {
      change: { requestedAgainAs: 'A-2', updatedAt: NOW },
      fence: [{ kind: 'not-requested-again' }],
      announcements: [{ kind: 'parent-update', detail: 'again:A-2' }],
    },
  },
  {
    name: 'checked, still pending and known: the unknown mark is cleared, failures reset',
    approval: base,
    event: { kind: 'checked', nextCheckAt: NEXT, failed: false, unknown: false },
    expected: {
      change: {
        lastCheckedAt: NOW,
        nextCheckAt: NEXT,
        endsClaim: true,
        checkFailures: 0,
        unknownSince: null,
      },
      fence: [CLAIM],
      announcements: [],
    },
  },
  {
    name: 'checked, a number the service does not know: since when is kept',
    approval: base,
    event: { kind: 'checked', nextCheckAt: NEXT, failed: false, unknown: true },
    expected: {
      change: {
        lastCheckedAt: NOW,
        nextCheckAt: NEXT,
        endsClaim: true,
        checkFailures: 0,
        unknownSince: { keptOr: NOW },
      },
      fence: [CLAIM],
      announcements: [],
    },
  },
  {
    name: 'check failed: one more failure, the unknown mark untouched; no claim, no fence',
    approval: base,
    event: { kind: 'checked', nextCheckAt: NEXT, failed: true },
    at: unclaimed,
    expected: {
      change: { lastCheckedAt: NOW, nextCheckAt: NEXT, endsClaim: true, checkFailures: 'one-more' },
      fence: [],
      announcements: [],
    },
  },
  {
    name: 'decided, still open at the service: thread, request message, approver’s DM',
    approval: fromWorkflow,
    event: {
      kind: 'decided',
      decision: 'approved',
      decidedBy: MARIA.login,
      ended: false,
      nextCheckAt: NEXT,
    },
    expected: {
      change: {
        decision: 'approved',
        decidedBy: MARIA.login,
        tracking: 'active',
        updatedAt: NOW,
        lastCheckedAt: NOW,
        nextCheckAt: NEXT,
        endsClaim: true,
        checkFailures: 0,
      },
      fence: [CLAIM],
      announcements: [
        { kind: 'decision', decision: 'approved' },
        { kind: 'parent-update', decision: 'approved' },
        { kind: 'approver-dm-update', decision: 'approved' },
      ],
    },
  },
  {
    name: 'decided and ended: no longer followed, and the workflow step completes',
    approval: fromWorkflow,
    event: {
      kind: 'decided',
      decision: 'rejected',
      decidedBy: ALEX.login,
      ended: true,
      nextCheckAt: NEXT,
    },
    expected: {
      change: {
        decision: 'rejected',
        decidedBy: ALEX.login,
        tracking: 'finished',
        updatedAt: NOW,
        lastCheckedAt: NOW,
        nextCheckAt: NEXT,
        endsClaim: true,
        checkFailures: 0,
      },
      fence: [CLAIM],
      announcements: [
        { kind: 'decision', decision: 'rejected' },
        { kind: 'parent-update', decision: 'rejected' },
        { kind: 'approver-dm-update', decision: 'rejected' },
        { kind: 'step-complete' },
      ],
    },
  },
  {
    name: 'decided and ended, not from a workflow: no step to complete',
    approval: base,
    event: {
      kind: 'decided',
      decision: 'approved',
      decidedBy: null,
      ended: true,
      nextCheckAt: NEXT,
    },
    expected: {
      change: {
        decision: 'approved',
        decidedBy: null,
        tracking: 'finished',
        updatedAt: NOW,
        lastCheckedAt: NOW,
        nextCheckAt: NEXT,
        endsClaim: true,
        checkFailures: 0,
      },
      fence: [CLAIM],
      announcements: [
        { kind: 'decision', decision: 'approved' },
        { kind: 'parent-update', decision: 'approved' },
        { kind: 'approver-dm-update', decision: 'approved' },
      ],
    },
  },
  {
    name: 'closed by the service without a decision',
    approval: base,
    event: { kind: 'closed', reason: 'ended' },
    expected: closing('ended', 'finished'),
  },
  {
    name: 'vanished: the service no longer knows it',
    approval: base,
    event: { kind: 'closed', reason: 'vanished' },
    expected: closing('vanished', 'finished'),
  },
  {
    name: 'gave up (timed out), from a workflow: its step completes',
    approval: fromWorkflow,
    event: { kind: 'gave-up' },
    expected: {
      ...closing('gave-up', 'gave-up'),
      announcements: [
        { kind: 'gave-up' },
        { kind: 'parent-update', detail: 'gave-up' },
        { kind: 'step-complete' },
      ],
    },
  },
  {
    name: 'handed over, the outgoing approver was shown their DM: they stay among the former',
    approval: base,
    event: {
      kind: 'handed-over',
      handover: { fromTerm: 0, to: ALEX, former: [MARIA] },
      nextCheckAt: NEXT,
    },
    facts: { approverShown: true },
    expected: {
      change: {
        approver: { ...ALEX, term: 1, since: NOW, formerApprovers: [MARIA] },
        remindersSent: 0,
        lastRemindedAt: null,
        approverUnreachableSince: null,
        updatedAt: NOW,
        lastCheckedAt: NOW,
        nextCheckAt: NEXT,
        endsClaim: true,
        checkFailures: 0,
        unknownSince: null,
      },
      fence: [{ kind: 'approver-term', term: 0 }, { kind: 'open' }, CLAIM],
      dropsEarlierApproversAnnouncements: true,
      announcements: [
        { kind: 'handed-over', occurrence: 1 },
        { kind: 'approver-dm' },
        { kind: 'parent-update', detail: 'handed-over:1' },
      ],
    },
  },
  {
    name: 'handed over before the outgoing approver was shown anything: they gain nothing',
    approval: base,
    event: {
      kind: 'handed-over',
      handover: { fromTerm: 0, to: ALEX, former: [MARIA] },
      nextCheckAt: NEXT,
    },
    facts: { approverShown: false },
    expected: {
      change: {
        approver: { ...ALEX, term: 1, since: NOW, formerApprovers: [] },
        remindersSent: 0,
        lastRemindedAt: null,
        approverUnreachableSince: null,
        updatedAt: NOW,
        lastCheckedAt: NOW,
        nextCheckAt: NEXT,
        endsClaim: true,
        checkFailures: 0,
        unknownSince: null,
      },
      fence: [{ kind: 'approver-term', term: 0 }, { kind: 'open' }, CLAIM],
      dropsEarlierApproversAnnouncements: true,
      announcements: [
        { kind: 'handed-over', occurrence: 1 },
        { kind: 'approver-dm' },
        { kind: 'parent-update', detail: 'handed-over:1' },
      ],
    },
  },
  {
    name: 'reminder due: the approver’s DM and its note in the thread, numbered',
    approval: base,
    event: { kind: 'reminder-due', occurrence: 2 },
    expected: {
      change: { remindersSent: 2, lastRemindedAt: NOW, updatedAt: NOW },
      fence: [CLAIM],
      announcements: [
        { kind: 'reminder', occurrence: 2 },
        { kind: 'reminder-note', occurrence: 2 },
      ],
    },
  },
  {
    name: 'escalation due: once, while open and reachable, after enough unanswered reminders',
    approval: base,
    event: { kind: 'escalation-due', to: LEADER, afterReminders: 2, answerWithinMs: 3_600_000 },
    facts: { unansweredReminders: 3 },
    expected: {
      change: { escalatedAt: NOW, escalatedTo: LEADER, updatedAt: NOW },
      fence: [
        { kind: 'unanswered-reminders', atLeast: 2, answerWithinMs: 3_600_000, now: NOW },
        { kind: 'not-escalated' },
        { kind: 'open' },
        { kind: 'approver-reachable' },
        CLAIM,
      ],
      // The count it was decided on, which the messages say.
      announcements: [
        { kind: 'escalation', occurrence: 3 },
        { kind: 'escalation-note', occurrence: 3 },
      ],
    },
  },
  {
    name: 'escalation due with nobody above the approver: recorded, nobody told',
    approval: base,
    event: { kind: 'escalation-due', to: null, afterReminders: 2, answerWithinMs: 1000 },
    facts: { unansweredReminders: 2 },
    expected: {
      change: { escalatedAt: NOW, escalatedTo: null, updatedAt: NOW },
      fence: [
        { kind: 'unanswered-reminders', atLeast: 2, answerWithinMs: 1000, now: NOW },
        { kind: 'not-escalated' },
        { kind: 'open' },
        { kind: 'approver-reachable' },
        CLAIM,
      ],
      announcements: [],
    },
  },
  {
    name: 'approver unreachable: the requester told once, Request again offered',
    approval: base,
    event: { kind: 'approver-unreachable', seq: 4 },
    at: unclaimed,
    expected: {
      change: { approverUnreachableSince: NOW, updatedAt: NOW },
      fence: [{ kind: 'approver-reachable' }, { kind: 'approver-before', seq: 4 }],
      announcements: [
        { kind: 'approver-unreachable' },
        { kind: 'parent-update', detail: 'approver-unreachable' },
      ],
    },
  },
  {
    name: 'approver unreachable after a handover: named by their term',
    approval: handedOnce,
    event: { kind: 'approver-unreachable', seq: 9 },
    at: unclaimed,
    expected: {
      change: { approverUnreachableSince: NOW, updatedAt: NOW },
      fence: [{ kind: 'approver-reachable' }, { kind: 'approver-before', seq: 9 }],
      announcements: [
        { kind: 'approver-unreachable' },
        { kind: 'parent-update', detail: 'approver-unreachable@1' },
      ],
    },
  },
  {
    name: 'approver found on the chat after a handover: recorded, lanes follow',
    approval: handedOnce,
    event: { kind: 'approver-found', seq: 9, chatId: 'U0ALEX' },
    at: unclaimed,
    expected: {
      change: { approverSlackId: 'U0ALEX', updatedAt: NOW },
      fence: [
        { kind: 'approver-account-unknown' },
        { kind: 'handed-over' },
        { kind: 'approver-before', seq: 9 },
      ],
      relanes: true,
      announcements: [{ kind: 'parent-update', detail: 'approver-found@1' }],
    },
  },
  {
    name: 'request posted where asked: the thread it joined stays',
    approval: inThread,
    event: { kind: 'request-posted', channel: 'C0CHAN', ts: '333.444' },
    at: unclaimed,
    expected: {
      change: {
        requestMessage: { channelId: 'C0CHAN', messageTs: '333.444', threadTs: '111.222' },
        updatedAt: NOW,
      },
      fence: [],
      relanes: true,
      announcements: [{ kind: 'approver-dm-update', detail: 'thread' }],
      follows: [],
    },
  },
  {
    name: 'request posted elsewhere (the requester’s DM): the thread it was to join is not there',
    approval: inThread,
    event: { kind: 'request-posted', channel: 'D0REQ', ts: '333.444' },
    at: unclaimed,
    expected: {
      change: {
        requestMessage: { channelId: 'D0REQ', messageTs: '333.444', threadTs: null },
        updatedAt: NOW,
      },
      fence: [],
      relanes: true,
      announcements: [{ kind: 'approver-dm-update', detail: 'thread' }],
      follows: [],
    },
  },
  {
    name: 'request posted for Request again: the old request message links to it',
    approval: requestedAgain,
    event: { kind: 'request-posted', channel: 'C0CHAN', ts: '333.444' },
    at: unclaimed,
    expected: {
      change: {
        requestMessage: { channelId: 'C0CHAN', messageTs: '333.444', threadTs: null },
        updatedAt: NOW,
      },
      fence: [],
      relanes: true,
      announcements: [{ kind: 'approver-dm-update', detail: 'thread' }],
      follows: [
        {
          djbh: 'A-0',
          event: { kind: 'request-again-posted', as: 'A-1', channel: 'C0CHAN', ts: '333.444' },
        },
      ],
    },
  },
  {
    name: 'request again posted: only on the approval it replaced',
    approval: base,
    event: { kind: 'request-again-posted', as: 'A-2', channel: 'C0CHAN', ts: '555.666' },
    at: unclaimed,
    expected: {
      change: { requestedAgainMessage: { channelId: 'C0CHAN', ts: '555.666' }, updatedAt: NOW },
      fence: [{ kind: 'requested-again-as', djbh: 'A-2' }],
      announcements: [{ kind: 'parent-update', detail: 'again-posted:A-2' }],
    },
  },
  {
    name: 'approver linked while marked unreachable: reachable again, Request again dropped',
    approval: withOverrides(base, {
      parties: { approver: { slackId: null, unreachableSince: NOW } },
    }),
    event: { kind: 'approver-linked', chatId: 'U0NEW' },
    at: unclaimed,
    expected: {
      change: { approverSlackId: 'U0NEW', approverUnreachableSince: null, updatedAt: NOW },
      fence: [{ kind: 'open' }, { kind: 'approver-login', login: MARIA.login }],
      announcements: [{ kind: 'parent-update', detail: `approver-linked-${NOW.getTime()}` }],
    },
  },
  {
    name: 'approver linked while reachable: only the account recorded',
    approval: base,
    event: { kind: 'approver-linked', chatId: 'U0NEW' },
    at: unclaimed,
    expected: {
      change: { approverSlackId: 'U0NEW' },
      fence: [{ kind: 'open' }, { kind: 'approver-login', login: MARIA.login }],
      announcements: [],
    },
  },
  {
    name: 'approver unlinked: the account is no longer recorded',
    approval: base,
    event: { kind: 'approver-unlinked', chatId: MARIA.chatId },
    at: unclaimed,
    expected: {
      change: { approverSlackId: null },
      fence: [
        { kind: 'open' },
        { kind: 'approver-login', login: MARIA.login },
        { kind: 'approver-account', chatId: MARIA.chatId },
      ],
      announcements: [],
    },
  },
  {
    name: 'retention due: removed while still ended, unchanged, settled and its Request again ended; nobody told',
    approval: requestedAgain,
    event: { kind: 'retention-due', before: NEXT },
    at: unclaimed,
    expected: {
      change: {},
      fence: [
        { kind: 'ended' },
        { kind: 'unchanged-since', before: NEXT },
        { kind: 'announcements-settled' },
        { kind: 'request-again-ended' },
      ],
      removes: true,
      announcements: [],
    },
  },
];

describe('transition', () => {
  it.each(table)('$name', ({ approval, event, at, facts, expected }) => {
    expect(transition(approval, event, at ?? claimed, facts)).toEqual(expected);
  });

  it('has a row for every event', () => {
    const kinds = new Set(table.map((row) => row.event.kind));
    const every: Record<LifecycleEvent['kind'], true> = {
      started: true,
      'requested-again': true,
      checked: true,
      decided: true,
      closed: true,
      'gave-up': true,
      'handed-over': true,
      'reminder-due': true,
      'escalation-due': true,
      'approver-unreachable': true,
      'approver-found': true,
      'request-posted': true,
      'request-again-posted': true,
      'approver-linked': true,
      'approver-unlinked': true,
      'retention-due': true,
    };
    expect([...kinds].sort()).toEqual(Object.keys(every).sort());
  });

  it('removes by one rule whatever the approval: the store sweeps by its fence alone', () => {
    const event = { kind: 'retention-due', before: NEXT } as const;
    for (const approval of [base, fromWorkflow, handedOnce, inThread])
      expect(transition(approval, event, claimed)).toEqual(retentionTransition(event));
  });

  it('records the handover’s outgoing approver once, however the service spells them', () => {
    const shown = withOverrides(base, { parties: { formerApprovers: [MARIA] } });
    const t = transition(
      shown,
      {
        kind: 'handed-over',
        handover: { fromTerm: 0, to: ALEX, former: [MARIA] },
        nextCheckAt: NEXT,
      },
      claimed,
      // Shown in an earlier term already: kept whatever this term's DM did.
      { approverShown: false },
    );
    expect(t.change.approver?.formerApprovers).toEqual([MARIA]);
  });
});
