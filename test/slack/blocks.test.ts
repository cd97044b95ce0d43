import { describe, expect, it } from 'vitest';
import type { Announcement, TrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { checkMessage, checkView } from '../../src/sandbox/block-kit-limits.ts';
import {
  buildApproverAnnouncement,
  buildApproverUnreachableReply,
  buildEscalationNote,
  buildReminderDigest,
  buildRequesterDm,
} from '../../src/slack/blocks/announcement-messages.ts';
import { buildApprovalModal } from '../../src/slack/blocks/approval-modal.ts';
import { buildHomeView } from '../../src/slack/blocks/home-view.ts';
import {
  buildApproverDm,
  buildDecisionReply,
  buildRequestAgainReply,
  buildRequestMessage,
  buildTextReply,
  escapeMrkdwn,
  fitMrkdwn,
  personRef,
  truncate,
} from '../../src/slack/blocks/request-message.ts';
import { buildListMessage, buildStatusMessage } from '../../src/slack/blocks/status-message.ts';
import { messagesFor } from '../../src/slack/i18n.ts';

// The pure Block Kit builders: what people type must show as typed and stay within Slack's limits.

import { type Overrides, trackedApproval, withOverrides } from '../helpers/approval-builder.ts';

const en = messagesFor('en-US');
const approval = (overrides: Overrides<TrackedApproval> = {}): TrackedApproval =>
  withOverrides(
    trackedApproval('9XFHBJySvnhh', {
      slack: { messageTs: '1.1' },
      request: { title: 'New laptop', createdAt: new Date(0) },
      outcome: { changedAt: new Date(0) },
    }),
    overrides,
  );

describe('buildRequestMessage', () => {
  it('shows markup a person typed as text, not as Slack mentions or links', () => {
    const message = buildRequestMessage(
      approval({ request: { note: 'ping <!channel> and <@U999> & <https://x.example|here>' } }),
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
      approval({ request: { title: '长'.repeat(200), note: 'x'.repeat(5000) } }),
      en,
      'https://approvals.example/',
    );
    expect(checkMessage(message)).toEqual([]);
    expect(JSON.stringify(message.blocks)).toContain('…');
  });

  it('names an approver who is not on Slack by login, and one who is by mention', () => {
    expect(JSON.stringify(buildRequestMessage(approval(), en).blocks)).toContain('b@corp.example');
    expect(
      JSON.stringify(
        buildRequestMessage(approval({ parties: { approver: { slackId: 'U2' } } }), en).blocks,
      ),
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

describe('hostile text through every builder', () => {
  const zh = messagesFor('zh-CN');
  const HOSTILE = [
    '<!channel> please approve',
    '<!here>',
    '<@U999HOSTILE>',
    '<https://evil.example|click>',
    '&'.repeat(200),
    '<'.repeat(200),
  ];
  // The longest each field can be: title 200, note 20,000 (the service's column), logins 100.
  const atLimit = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
  const live = /<!|<@U999|<https?:|<mailto:/;

  /** Every text Slack renders as mrkdwn or uses for notifications, in a message or view. */
  function texts(value: unknown): string[] {
    if (typeof value === 'string') return [value];
    if (Array.isArray(value)) return value.flatMap(texts);
    if (value && typeof value === 'object') {
      const o = value as Record<string, unknown>;
      // A button's URL is ours, not typed; plain_text is never parsed for mentions.
      if (o.type === 'plain_text') return [];
      return Object.entries(o)
        .filter(([k]) => k !== 'url' && k !== 'action_id' && k !== 'block_id')
        .flatMap(([, v]) => texts(v));
    }
    return [];
  }

  for (const hostile of HOSTILE) {
    it(`keeps ${JSON.stringify(hostile.slice(0, 20))} inert and within limits everywhere`, () => {
      for (const t of [en, zh]) {
        const a = approval({
          request: { title: atLimit(hostile, 200), note: atLimit(hostile, 20_000) },
          parties: { approver: { login: atLimit(hostile, 100) } },
          outcome: { decision: 'approved', tracking: 'finished' },
        });
        const by = personRef(null, a.parties.approver.login);
        const messages = [
          buildRequestMessage(a, t, 'https://approvals.example/'),
          buildApproverDm(a, t, {
            thread: 'https://slack.example/p1',
            webUrl: 'https://a.example/',
          }),
          buildDecisionReply('approved', by, personRef('U1', 'a@corp.example'), t),
          buildTextReply(t.aboutApproval(escapeMrkdwn(a.request.title), a.djbh)),
          buildTextReply(t.approverNotOnSlack(escapeMrkdwn(a.parties.approver.login))),
          buildRequestAgainReply(
            `${t.approverNotOnSlack(escapeMrkdwn(a.parties.approver.login))} ${t.requestAgainHint}`,
            a.djbh,
            t,
          ),
          // The escalation DM: the approver's DM opened by who waited how long for whom.
          buildApproverDm(
            a,
            t,
            { thread: 'https://slack.example/p1' },
            t.escalationDm(
              by,
              personRef(null, a.parties.approver.login),
              t.waited(3 * 86_400_000),
              2,
            ),
          ),
          buildTextReply(t.escalationNote(personRef('U2', 'b@corp.example'), by, 2)),
          buildStatusMessage(
            a.djbh,
            'approved',
            { tracked: a, approver: personRef(null, a.parties.approver.login) },
            t,
          ),
          buildListMessage(Array(10).fill(a), { approvals: Array(10).fill(a), total: 30 }, t),
        ];
        for (const message of messages) {
          expect(checkMessage(message)).toEqual([]);
          for (const text of texts(message)) expect(text).not.toMatch(live);
        }
        const home = buildHomeView(
          {
            login: a.parties.approver.login,
            linking: 'self',
            linked: {
              slackUserId: 'U1',
              teamId: 'T1',
              login: a.parties.approver.login,
              name: a.request.title,
              linkedAt: new Date(0),
            },
            waiting: { approvals: Array(20).fill(a), total: 20 },
            mine: { approvals: Array(20).fill(a), total: 20 },
            permalinks: new Map(),
            now: new Date(0),
          },
          t,
        );
        expect(checkView(home as unknown as Record<string, unknown>)).toEqual([]);
        for (const text of texts(home)) expect(text).not.toMatch(live);
      }
    });
  }

  it('cuts escaped text without breaking an entity or a mention', () => {
    expect(fitMrkdwn('&amp;&amp;&amp;', 7)).toBe('&amp;…');
    expect(fitMrkdwn('hi <@U12345> there', 8)).toBe('hi …');
    expect(fitMrkdwn('short', 10)).toBe('short');
  });
});

describe('buildHomeView', () => {
  it('names who asks in what waits for me, and who decides in my own requests', () => {
    const mine = approval({
      djbh: 'MINEMINEMINEa',
      parties: { requester: { slackId: 'U0ME' }, approver: { slackId: 'U0BOSS' } },
    });
    const theirs = approval({
      djbh: 'THEIRSTHEIRSa',
      parties: { requester: { slackId: 'U0ASKER' }, approver: { slackId: 'U0ME' } },
    });
    const home = buildHomeView(
      {
        login: 'me@corp.example',
        linking: 'self',
        linked: undefined,
        waiting: { approvals: [theirs], total: 1 },
        mine: { approvals: [mine], total: 1 },
        permalinks: new Map(),
        now: new Date(0),
      },
      en,
    );
    const rowOf = (djbh: string) =>
      JSON.stringify(home.blocks.find((b) => JSON.stringify(b).includes(djbh)));
    expect(rowOf('THEIRSTHEIRSa')).toContain('<@U0ASKER>');
    expect(rowOf('MINEMINEMINEa')).toContain('<@U0BOSS>');
    expect(rowOf('MINEMINEMINEa')).not.toContain('<@U0ME>');
  });
});

describe('a linked title', () => {
  it('reads the same in the digest and on Home: bold around the link, never inside its text', () => {
    const link = 'https://corp.slack.com/archives/C1/p1';
    const a = approval({
      request: { title: 'Conference trip' },
      parties: { requester: { slackId: 'U0ASKER' } },
    });
    const digest = JSON.stringify(
      buildReminderDigest([{ approval: a, link, waitedMs: 3_600_000 }], 2, en),
    );
    const home = JSON.stringify(
      buildHomeView(
        {
          login: 'me@corp.example',
          linking: 'self',
          linked: undefined,
          waiting: { approvals: [a], total: 1 },
          mine: { approvals: [], total: 0 },
          permalinks: new Map([[a.djbh, link]]),
          now: new Date(0),
        },
        en,
      ),
    );
    for (const surface of [digest, home]) {
      expect(surface).toContain(`*<${link}|Conference trip>*`);
      expect(surface).not.toContain('|*Conference trip*>');
    }
  });
});

describe('the approver picker', () => {
  it('speaks the person’s language in its placeholder', () => {
    const metadata = { channelId: 'C1', locale: 'zh-CN' };
    const zhView = buildApprovalModal(
      { title: '', note: '', info: [], metadata },
      messagesFor('zh-CN'),
    );
    expect(JSON.stringify(zhView)).toContain(
      '"placeholder":{"type":"plain_text","text":"选择一个人…"}',
    );
    expect(checkView(zhView as unknown as Record<string, unknown>)).toEqual([]);
  });
});

describe('announcement messages', () => {
  const announcement = (overrides: Partial<Announcement> = {}): Announcement => ({
    id: '9XFHBJySvnhh:reminder:2',
    djbh: '9XFHBJySvnhh',
    kind: 'reminder',
    decision: null,
    occurrence: 2,
    state: 'pending',
    attempts: 0,
    attemptedAt: null,
    uncertain: false,
    nextAttemptAt: new Date(0),
    firstAttemptedAt: null,
    redrivenAt: null,
    pausedMs: 0,
    sentChannel: null,
    sentTs: null,
    lastError: null,
    createdAt: new Date(2 * 3_600_000),
    ...overrides,
  });

  it('opens a reminder DM with who has waited how long, and a first DM without it', () => {
    const reminder = buildApproverAnnouncement(announcement(), approval(), en, {});
    expect(reminder.text).toContain('<@U1> has been waiting 2 hours');
    const first = buildApproverAnnouncement(
      announcement({ kind: 'approver-dm', occurrence: null }),
      approval(),
      en,
      {},
    );
    expect(first.text).not.toContain('waiting');
    expect(first.text).toBe(buildApproverDm(approval(), en, {}).text);
  });

  it('names the leader in the escalation note as plain, escaped text, never as a mention', () => {
    const note = buildEscalationNote(
      announcement({ kind: 'escalation-note' }),
      approval(),
      en,
      '<@U9> & co',
    );
    expect(note.text).toContain('escalated to &lt;@U9&gt; &amp; co, their leader');
    expect(note.text).toContain('did not answer 2 reminders');
  });

  it('tells the requester which request a DM is about, and offers Request again when the approver is out of reach', () => {
    const unreachable = buildApproverUnreachableReply(approval(), en, false);
    expect(unreachable.text).toContain('The approver b@corp.example is not on Slack');
    expect(JSON.stringify(unreachable.blocks)).toContain('"value":"9XFHBJySvnhh"');
    const dm = buildRequesterDm(approval({ request: { title: 'Laptop <@U9>' } }), en, unreachable);
    expect(dm.text).toBe(
      `About your request *Laptop &lt;@U9&gt;* \`9XFHBJySvnhh\` (the app can no longer post in its thread): ${unreachable.text}`,
    );
    expect(dm.blocks).toHaveLength(unreachable.blocks.length + 1);
    for (const message of [unreachable, dm]) expect(checkMessage(message)).toEqual([]);
  });
});
