import { describe, expect, it } from 'vitest';
import {
  type ApprovalParties,
  type ConversationMembership,
  channelParties,
  decide,
  whoMay,
  workspaceParties,
} from '../../src/approvals/access-policy.ts';
import { confirmationParties } from '../../src/approvals/step-confirmation.ts';

// The rule itself, with a membership port that records what it was asked.

const parties: ApprovalParties = {
  requesterChatId: 'U0SAM',
  requesterLogin: 'sam@corp.example',
  approverChatId: null,
  approverLogin: 'maria@corp.example',
  postedIn: 'C0PROJECT',
};

function members(list: Record<string, string[]> | 'down'): ConversationMembership & {
  asked: string[];
} {
  const asked: string[] = [];
  return {
    asked,
    async isMember(conversation, user) {
      asked.push(conversation);
      if (list === 'down') throw new Error('ratelimited');
      return list[conversation]?.includes(user) ?? false;
    },
  };
}

const asker = (chatId: string, login: string | null | 'fails' = null) => ({
  chatId,
  login: async () => {
    if (login === 'fails') throw new Error('users.info failed');
    return login;
  },
});

describe('who may see an approval', () => {
  it('lets its requester and approver see it without asking who is in the channel', async () => {
    const m = members('down');
    expect(await decide('see', parties, asker('U0SAM'), m)).toBe('allowed');
    // Maria was not on Slack when it started: her login says she is the approver.
    expect(await decide('see', parties, asker('U0MARIA', 'maria@corp.example'), m)).toBe('allowed');
    expect(m.asked).toEqual([]);
  });

  it('recognises the approver by a login spelled in another case, as the service does', async () => {
    const m = members('down');
    const asMaria = asker('U0MARIA', 'Maria@Corp.Example');
    expect(await decide('see', parties, asMaria, m)).toBe('allowed');
  });

  it('lets a member of the conversation it was posted in see it, and nobody else', async () => {
    const m = members({ C0PROJECT: ['U0PRIYA'] });
    expect(await decide('see', parties, asker('U0PRIYA', 'priya@corp.example'), m)).toBe('allowed');
    expect(await decide('see', parties, asker('U0ALEX', 'alex@corp.example'), m)).toBe('denied');
  });

  it('shows a request not yet posted to its requester and approver only', async () => {
    const m = members({ C0PROJECT: ['U0PRIYA'] });
    const unposted = { ...parties, postedIn: null };
    expect(await decide('see', unposted, asker('U0PRIYA', 'priya@corp.example'), m)).toBe('denied');
    expect(m.asked).toEqual([]);
  });

  it('is unsure, never allowing, when a rule that might allow it cannot be checked', async () => {
    expect(
      await decide('see', parties, asker('U0PRIYA', 'priya@corp.example'), members('down')),
    ).toBe('unsure');
    expect(await decide('see', parties, asker('U0MARIA', 'fails'), members({}))).toBe('unsure');
  });
});

describe('who may answer a workflow step’s confirmation', () => {
  it('is the requester alone, by Slack user: not the approver, not a channel member', async () => {
    const c = confirmationParties({ requesterChatId: 'U0SAM' });
    const m = members({ C0PROJECT: ['U0PRIYA'] });
    expect(await decide('confirm-start', c, asker('U0SAM'), m)).toBe('allowed');
    expect(await decide('confirm-start', c, asker('U0PRIYA', 'sam@corp.example'), m)).toBe(
      'denied',
    );
  });
});

describe('who may change a channel’s templates', () => {
  const channel = channelParties('C0PROJECT');
  const admin = (chatId: string, is: boolean | 'fails') => ({
    ...asker(chatId),
    isWorkspaceAdmin: async () => {
      if (is === 'fails') throw new Error('users.info failed');
      return is;
    },
  });

  it('is the channel’s members by default, admin or not', async () => {
    const m = members({ C0PROJECT: ['U0SAM'] });
    const rules = whoMay();
    expect(await decide('manage-templates', channel, admin('U0SAM', false), m, rules)).toBe(
      'allowed',
    );
    expect(await decide('manage-templates', channel, admin('U0BOSS', true), m, rules)).toBe(
      'denied',
    );
  });

  it('is the workspace’s admins and owners alone with TEMPLATE_MANAGERS=admins; using them stays with members', async () => {
    const m = members({ C0PROJECT: ['U0SAM', 'U0BOSS'] });
    const rules = whoMay({ templateManagers: 'admins' });
    expect(await decide('manage-templates', channel, admin('U0SAM', false), m, rules)).toBe(
      'denied',
    );
    expect(await decide('manage-templates', channel, admin('U0BOSS', true), m, rules)).toBe(
      'allowed',
    );
    expect(await decide('manage-templates', channel, admin('U0BOSS', 'fails'), m, rules)).toBe(
      'unsure',
    );
    expect(await decide('use-templates', channel, admin('U0SAM', false), m, rules)).toBe('allowed');
  });

  it('with TEMPLATE_MANAGERS=admins narrows the members’ right: an admin who is not in the channel may not', async () => {
    // Before, being an admin replaced being a member: an admin who left a private channel could
    // still read and reroute its templates.
    const m = members({ C0PROJECT: ['U0SAM'] });
    const rules = whoMay({ templateManagers: 'admins' });
    expect(await decide('manage-templates', channel, admin('U0BOSS', true), m, rules)).toBe(
      'denied',
    );
    expect(await decide('manage-templates', channel, admin('U0BOSS', 'fails'), m, rules)).toBe(
      'denied',
    );
  });
});

describe('who may read reports', () => {
  const boss = (isAdmin: boolean | 'fails') => ({
    ...asker('U0BOSS', 'boss@corp.example'),
    isWorkspaceAdmin: async () => {
      if (isAdmin === 'fails') throw new Error('users.info failed');
      return isAdmin;
    },
  });

  it('is the workspace’s admins and owners alone: not an approver, not a channel member', async () => {
    const m = members({ C0PROJECT: ['U0BOSS'] });
    expect(await decide('see-reports', workspaceParties(), boss(true), m)).toBe('allowed');
    expect(await decide('see-reports', workspaceParties(), boss(false), m)).toBe('denied');
    expect(await decide('see-reports', workspaceParties(), boss('fails'), m)).toBe('unsure');
    // Whatever they play toward an approval, reports are not theirs.
    expect(await decide('see-reports', parties, asker('U0SAM', 'sam@corp.example'), m)).toBe(
      'denied',
    );
    expect(m.asked).toEqual([]);
  });
});
