import { describe, expect, it } from 'vitest';
import { noteWithSource, titleFromText } from '../../src/approvals/prefill.ts';
import { stepOutcome } from '../../src/approvals/step-outcome.ts';
import { mentionedUsers, readableText } from '../../src/slack/requests/message-text.ts';
import { trackedApproval, withOverrides } from '../helpers/approval-builder.ts';

describe('prefilling the form from a message', () => {
  it('titles it with the first line that has text', () => {
    expect(titleFromText('\n  \n  New laptop for Ana  \nDetails follow', 200)).toBe(
      'New laptop for Ana',
    );
    expect(titleFromText('   ', 200)).toBe('');
  });

  it('cuts a long first line after a whole word, ellipsis included in the limit', () => {
    const title = titleFromText('alpha beta gamma delta', 14);
    expect(title).toBe('alpha beta…');
    expect([...title].length).toBeLessThanOrEqual(14);
  });

  it('cuts text without spaces (Chinese) at the limit', () => {
    expect(titleFromText('扩容存储集群的申请说明', 6)).toBe('扩容存储集…');
  });

  it('keeps the source link whole and cuts the text before it to fit', () => {
    const link = 'https://x.slack.com/archives/C1/p1';
    const note = noteWithSource('x'.repeat(100), link, 60);
    expect([...note].length).toBe(60);
    expect(note.endsWith(`…\n\n${link}`)).toBe(true);
    expect(noteWithSource(' short ', undefined, 60)).toBe('short');
  });

  it('reads Slack’s markup as a person would: names, labels, no escapes', () => {
    const text =
      'Hi <@U1>, see <https://x.example|the quote> in <#C1|general> &amp; <@U2|ana> &lt;3';
    expect(readableText(text, (id) => (id === 'U1' ? 'Maria Lopez' : undefined))).toBe(
      'Hi @Maria Lopez, see the quote in #general & @ana <3',
    );
    expect(mentionedUsers(text)).toEqual(['U1', 'U2']);
  });
});

describe('the outcome a workflow step completes with', () => {
  const base = trackedApproval('9XFHBJySvnhh', {
    parties: { approver: { login: 'maria.lopez@corp.example' } },
    outcome: {
      decision: 'pending',
      decidedBy: null,
      tracking: 'finished',
      unknownSince: null,
      changedAt: new Date('2026-11-22T10:00:00Z'),
    },
  });

  it('is the decision, who took it and when', () => {
    expect(
      stepOutcome(
        withOverrides(base, { outcome: { decision: 'rejected', decidedBy: 'x@corp.example' } }),
      ),
    ).toEqual({
      ok: true,
      approvalNumber: '9XFHBJySvnhh',
      decision: 'rejected',
      decidedByLogin: 'x@corp.example',
      decidedAt: 1_795_341_600,
    });
  });

  it('is `ended` when the service closed the approval without a decision', () => {
    expect(stepOutcome(base)).toMatchObject({ ok: true, decision: 'ended', decidedByLogin: null });
  });

  it('is an error when the app stopped following it, or the service forgot it', () => {
    expect(stepOutcome(withOverrides(base, { outcome: { tracking: 'gave-up' } }))).toEqual({
      ok: false,
      reason: 'gave-up',
    });
    expect(stepOutcome(withOverrides(base, { outcome: { unknownSince: new Date() } }))).toEqual({
      ok: false,
      reason: 'vanished',
    });
  });
});
