import { describe, expect, it } from 'vitest';
import { ruleOf } from '../../src/approvals/announcement-rules.ts';
import { laneOf } from '../../src/approvals/conversation.ts';
import type { TrackedApproval } from '../../src/approvals/tracked-approval.ts';

const base = {
  djbh: 'AAAAAAAAAAAa',
  channelId: 'C1',
  messageTs: '1.1',
  requesterSlackId: 'U1',
  requesterLogin: 'sam@corp.example',
  approverLogin: 'Maria@Corp.example',
  approverSlackId: 'U2',
  escalatedTo: null,
} as unknown as TrackedApproval;
const lane = (kind: Parameters<typeof ruleOf>[0], overrides: Partial<TrackedApproval> = {}) =>
  laneOf(ruleOf(kind), { ...base, ...overrides });

describe('the lane of an announcement', () => {
  it('is the conversation it goes to: a channel and its threads share one pace, edits have their own', () => {
    expect(lane('request')).toBe('post:C1');
    expect(lane('decision')).toBe('post:C1');
    expect(lane('parent-update')).toBe('edit:post:C1');
    expect(lane('step-complete')).toBe('own:AAAAAAAAAAAa');
  });

  it('names a DM by the person it is with, whichever way the app got there', () => {
    // A request asked in the requester's DM, its thread, the thread's fallback, their approver DM.
    expect(lane('request', { channelId: 'D9' })).toBe('dm:U1');
    expect(lane('decision', { channelId: 'D9' })).toBe('dm:U1');
    expect(lane('decision', { messageTs: null })).toBe('dm:U1');
    expect(lane('reminder', { approverSlackId: 'U1' })).toBe('dm:U1');
    expect(lane('escalation', { escalatedTo: { login: 'sam@corp.example', chatId: 'U1' } })).toBe(
      'dm:U1',
    );
    // Not known on the chat yet: by login, compared without case.
    expect(lane('approver-dm', { approverSlackId: null })).toBe('dm:login:maria@corp.example');
  });
});
