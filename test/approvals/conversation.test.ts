import { describe, expect, it } from 'vitest';
import { ruleOf } from '../../src/approvals/announcement-rules.ts';
import { laneOf } from '../../src/approvals/conversation.ts';
import type { TrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { type Overrides, trackedApproval, withOverrides } from '../helpers/approval-builder.ts';

const base = trackedApproval('AAAAAAAAAAAa', {
  slack: { channelId: 'C1', messageTs: '1.1' },
  parties: {
    requester: { slackId: 'U1', login: 'sam@corp.example' },
    approver: { login: 'Maria@Corp.example', slackId: 'U2' },
  },
  followUp: { escalatedTo: null },
});
const lane = (kind: Parameters<typeof ruleOf>[0], overrides: Overrides<TrackedApproval> = {}) =>
  laneOf(ruleOf(kind), withOverrides(base, overrides));

describe('the lane of an announcement', () => {
  it('is the conversation it goes to: a channel and its threads share one pace, edits have their own', () => {
    expect(lane('request')).toBe('post:C1');
    expect(lane('decision')).toBe('post:C1');
    expect(lane('parent-update')).toBe('edit:post:C1');
    expect(lane('step-complete')).toBe('own:AAAAAAAAAAAa');
  });

  it('names a DM by the person it is with, whichever way the app got there', () => {
    // A request asked in the requester's DM, its thread, the thread's fallback, their approver DM
    // (Sam approving someone's request) and an escalation to them: one lane, Sam's.
    const sam = 'dm:login:sam@corp.example';
    expect(lane('request', { slack: { channelId: 'D9' } })).toBe(sam);
    expect(lane('decision', { slack: { channelId: 'D9' } })).toBe(sam);
    expect(lane('decision', { slack: { messageTs: null } })).toBe(sam);
    expect(
      lane('reminder', { parties: { approver: { slackId: 'U1', login: 'Sam@corp.example' } } }),
    ).toBe(sam);
    expect(
      lane('escalation', {
        followUp: { escalatedTo: { login: 'sam@corp.example', chatId: 'U1' } },
      }),
    ).toBe(sam);
    // By login, compared without case, whether or not the approval knew their chat account: a
    // link may move them to another account before the message goes (person.ts, Identities).
    expect(lane('approver-dm', { parties: { approver: { slackId: null } } })).toBe(
      'dm:login:maria@corp.example',
    );
    expect(lane('approver-dm')).toBe('dm:login:maria@corp.example');
  });
});
