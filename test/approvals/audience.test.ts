import { describe, expect, it } from 'vitest';
import type { ApprovalParties, ConversationMembership } from '../../src/approvals/access-policy.ts';
import { ANNOUNCEMENT_KINDS } from '../../src/approvals/announcement-rules.ts';
import { askerOf, carriedBy, mayReach } from '../../src/approvals/audience.ts';

// The audience rule on its own: who reads where a message goes, against WHO_MAY['see'].

const parties: ApprovalParties = {
  requesterChatId: 'U0SAM',
  requesterLogin: 'sam@corp.example',
  approverChatId: 'U0MARIA',
  approverLogin: 'maria@corp.example',
  escalatedTo: { chatId: 'U0CHEN', login: 'chen@corp.example' },
  postedIn: 'G0PRIVATE',
};
const approval = {
  parties,
  conversation: 'G0PRIVATE',
  requester: askerOf({ chatId: 'U0SAM', login: 'sam@corp.example' }),
};
const members = (list: Record<string, string[]>): ConversationMembership => ({
  isMember: async (c, u) => list[c]?.includes(u) ?? false,
});
const dm = (chatId: string, login: string | null = null) =>
  ({ kind: 'dm', person: { chatId, login } }) as const;

describe('who may read what the app sends', () => {
  it('lets a title and note reach the requester, the approver and the leader it was escalated to, and no one else, by DM', async () => {
    const m = members({ G0PRIVATE: ['U0SAM', 'U0PRIYA'] });
    for (const to of [dm('U0SAM'), dm('U0MARIA'), dm('U0CHEN'), dm('U0X', 'Chen@corp.example')])
      expect(await mayReach(to, 'title-and-note', approval, m)).toBe('allowed');
    expect(await mayReach(dm('U0ALEX', 'alex@corp.example'), 'title-and-note', approval, m)).toBe(
      'denied',
    );
    // A member of where it was posted may see it, by DM too.
    expect(await mayReach(dm('U0PRIYA'), 'title-and-note', approval, m)).toBe('allowed');
  });

  it('lets what carries neither title nor note go anywhere', async () => {
    const m = members({});
    expect(await mayReach(dm('U0ALEX'), 'nothing', approval, m)).toBe('allowed');
  });

  it('posts in a conversation other than the approval’s own only where its requester is a member now', async () => {
    const m = members({ C0OLD: ['U0PRIYA'], C0NEW: ['U0SAM'] });
    const old = { kind: 'conversation', id: 'C0OLD' } as const;
    expect(await mayReach(old, 'title-and-note', approval, m)).toBe('denied');
    const now = { kind: 'conversation', id: 'C0NEW' } as const;
    expect(await mayReach(now, 'title-and-note', approval, m)).toBe('allowed');
    const own = { kind: 'conversation', id: 'G0PRIVATE' } as const;
    expect(await mayReach(own, 'title-and-note', approval, members({}))).toBe('allowed');
    const down: ConversationMembership = { isMember: () => Promise.reject(new Error('down')) };
    expect(await mayReach(old, 'title-and-note', approval, down)).toBe('unsure');
  });

  it('reads what each kind carries from its rule', () => {
    const carrying = ANNOUNCEMENT_KINDS.filter((k) => carriedBy(k) === 'title-and-note');
    expect(carrying.sort()).toEqual(
      [
        'approver-dm',
        'approver-dm-update',
        'escalation',
        'parent-update',
        'reminder',
        'request',
      ].sort(),
    );
  });
});
