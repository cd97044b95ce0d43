import { describe, expect, it } from 'vitest';
import type { TrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { checkMessage } from '../../src/sandbox/block-kit-limits.ts';
import { buildApprovalModal } from '../../src/slack/blocks/approval-modal.ts';
import { buildRequestMessage, truncate } from '../../src/slack/blocks/request-message.ts';
import { messagesFor } from '../../src/slack/i18n.ts';

// The pure Block Kit builders: what people type must show as typed and stay within Slack's limits.

const en = messagesFor('en-US');
const approval = (overrides: Partial<TrackedApproval> = {}): TrackedApproval => ({
  djbh: '9XFHBJySvnhh',
  teamId: 'T1',
  channelId: 'C1',
  messageTs: '1.1',
  requesterSlackId: 'U1',
  requesterLogin: 'a@corp.example',
  approverLogin: 'b@corp.example',
  approverSlackId: null,
  title: 'New laptop',
  note: 'n',
  decision: 'pending',
  decidedBy: null,
  tracking: 'active',
  locale: 'en-US',
  createdAt: new Date(0),
  updatedAt: new Date(0),
  lastCheckedAt: null,
  nextCheckAt: new Date(0),
  checkFailures: 0,
  remindersSent: 0,
  lastRemindedAt: null,
  unknownSince: null,
  ...overrides,
});

describe('buildRequestMessage', () => {
  it('shows markup a person typed as text, not as Slack mentions or links', () => {
    const message = buildRequestMessage(
      approval({ note: 'ping <!channel> and <@U999> & <https://x.example|here>' }),
      en,
    );
    const blocks = JSON.stringify(message.blocks);
    expect(blocks).toContain('&lt;!channel&gt;');
    expect(blocks).toContain('&lt;@U999&gt;');
    expect(blocks).toContain('&amp;');
    expect(blocks).not.toContain('<!channel>');
  });

  it('stays within Slack’s limits for the longest title and note the service accepts', () => {
    const message = buildRequestMessage(
      approval({ title: '长'.repeat(200), note: 'x'.repeat(5000) }),
      en,
      'https://approvals.example/',
    );
    expect(checkMessage(message)).toEqual([]);
    expect(JSON.stringify(message.blocks)).toContain('…');
  });

  it('names an approver who is not on Slack by login, and one who is by mention', () => {
    expect(JSON.stringify(buildRequestMessage(approval(), en).blocks)).toContain('b@corp.example');
    expect(
      JSON.stringify(buildRequestMessage(approval({ approverSlackId: 'U2' }), en).blocks),
    ).toContain('<@U2>');
  });
});

describe('truncate', () => {
  it('cuts on characters, not UTF-16 halves, and marks the cut', () => {
    expect(truncate('🚀🚀🚀', 2)).toBe('🚀…');
    expect(truncate('abc', 3)).toBe('abc');
  });
});

describe('buildApprovalModal', () => {
  it('keeps the same block and action ids in every state, so Slack keeps what was typed', () => {
    const metadata = { channelId: 'C1', locale: 'en-US' };
    const ids = (view: ReturnType<typeof buildApprovalModal>) =>
      view.blocks
        .filter((b) => b.type === 'input')
        .map(
          (b) =>
            `${b.block_id}/${'element' in b ? (b.element as { action_id?: string }).action_id : ''}`,
        );
    const loading = buildApprovalModal({ title: '', note: '', info: ['…'], metadata }, en);
    const filled = buildApprovalModal(
      { title: 'T', note: '', info: ['chain', 'suggested'], approverSlackId: 'U2', metadata },
      en,
    );
    expect(ids(filled)).toEqual(ids(loading));
  });
});
