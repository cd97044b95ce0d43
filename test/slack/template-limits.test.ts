import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adaptText, serviceLength } from '../../src/approvals/acceptable-text.ts';
import { prepareApproval } from '../../src/approvals/approval-request.ts';
import {
  applyTemplate,
  checkTemplateDraft,
  type RequestTemplate,
  templateOverLimits,
} from '../../src/approvals/request-templates.ts';
import type { TrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { checkMessage, checkView } from '../../src/sandbox/block-kit-limits.ts';
import { buildRequestMessage } from '../../src/slack/blocks/request-message.ts';
import {
  buildTemplateEditor,
  buildTemplatesModal,
} from '../../src/slack/blocks/templates-modal.ts';
import { messagesFor } from '../../src/slack/i18n.ts';
import { trackedApproval, withOverrides } from '../helpers/approval-builder.ts';
import { runs } from '../helpers/fast-check-runs.ts';

// Limits are checked on the text as it is sent: a template's prefix and skeleton as the service
// stores them (emoji as `:name:` codes), and every Block Kit field once escaped. Generated over
// texts full of emoji (single, with a skin tone, joined, flags), markup characters and quotes.

const PIECES = [
  'a',
  'Z',
  ' ',
  '&',
  '<',
  '>',
  "'",
  '*',
  '\n',
  '中',
  '🔐',
  '🎉',
  '👍🏽',
  '👨‍👩‍👧',
  '🇯🇵',
  '𝔸',
];
/** Text of `min` to `max` pieces, spread over the whole range (not fast-check's small sizes). */
const typed = (min: number, max: number) =>
  fc
    .array(fc.constantFrom(...PIECES), { minLength: min, maxLength: max, size: 'max' })
    .map((p) => p.join(''));
const LOCALES = [messagesFor('en-US'), messagesFor('zh-CN')];
const T0 = new Date('2026-11-25T10:00:00Z');

function templateOf(draft: {
  name: string;
  titlePrefix: string;
  noteSkeleton: string;
}): RequestTemplate {
  return {
    id: 'tpl1',
    channelId: 'C1',
    ...draft,
    approverChatId: null,
    createdBy: 'U1',
    createdAt: T0,
    updatedBy: 'U2',
    updatedAt: T0,
    removedBy: null,
    removedAt: null,
  };
}

// Sizes around the limits: most drafts are accepted, many only just.
const drafts = fc.record({
  name: fc.oneof(typed(1, 10), typed(30, 50), fc.constant('&'.repeat(50))),
  titlePrefix: fc.oneof(typed(0, 10), typed(10, 90)),
  noteSkeleton: fc.oneof(typed(0, 50), typed(100, 1500)),
  approverChatId: fc.constant(null),
});

describe('template limits, generated', () => {
  it('a template the editor accepts fits every Block Kit field it is shown in, once escaped', () => {
    let accepted = 0;
    fc.assert(
      fc.property(drafts, (draft) => {
        const checked = checkTemplateDraft(draft);
        if (!checked.ok) return;
        accepted++;
        const template = templateOf(checked.draft);
        for (const t of LOCALES) {
          const editor = buildTemplateEditor({ channelId: 'C1', locale: 'en', template }, t);
          expect(checkView(editor as never)).toEqual([]);
          const list = buildTemplatesModal(
            {
              channelId: 'C1',
              locale: 'en',
              timeZone: 'UTC',
              templates: [template],
              history: [
                { templateId: 'tpl1', name: template.name, action: 'removed', by: 'U1', at: T0 },
              ],
            },
            t,
          );
          expect(checkView(list as never)).toEqual([]);
        }
      }),
      { numRuns: runs(300) },
    );
    // Enough of them accepted for the property to say something.
    expect(accepted).toBeGreaterThan(50);
  });

  it('a request made from a template the editor accepts is never too long because of it', () => {
    fc.assert(
      fc.property(drafts, typed(0, 20), (draft, title) => {
        const checked = checkTemplateDraft(draft);
        if (!checked.ok) return;
        // The person's own part within what a prefix at its limit leaves (200 − 100 − a space).
        const own = title || 'VPN';
        if (serviceLength(adaptText(own).text) > 99) return;
        const template = templateOf(checked.draft);
        const form = applyTemplate({ title: own, note: '' }, template);
        const prepared = prepareApproval(
          { title: form.title, note: form.note || 'n', approverLogin: 'b@corp.example' },
          'a@corp.example',
          { title: 200, note: 5000 },
        );
        if (!prepared.ok) {
          expect(prepared.problems.title?.code).not.toBe('too-long');
          expect(prepared.problems.note?.code).not.toBe('too-long');
          return;
        }
        // And the request message that shows it, its name included, fits Slack's limits.
        const a = withOverrides(approval, {
          request: {
            title: prepared.input.title,
            note: prepared.input.note,
            template: { id: null, name: template.name },
          },
        });
        for (const t of LOCALES)
          expect(checkMessage(buildRequestMessage(a, t, 'https://a.example/'))).toEqual([]);
      }),
      { numRuns: runs(300) },
    );
  });

  it('a request too long because of a template (saved before these checks) names the template', () => {
    fc.assert(
      fc.property(typed(0, 90), typed(0, 1500), (titlePrefix, noteSkeleton) => {
        const template = templateOf({ name: 'T', titlePrefix, noteSkeleton });
        const form = applyTemplate({ title: 'VPN', note: '' }, template);
        const prepared = prepareApproval(
          { title: form.title, note: form.note || 'n', approverLogin: 'b@corp.example' },
          'a@corp.example',
          { title: 200, note: 2000 },
        );
        const over = templateOverLimits(template);
        if (!prepared.ok && prepared.problems.title?.code === 'too-long')
          expect(over.titlePrefix?.code).toBe('too-long');
        if (!prepared.ok && prepared.problems.note?.code === 'too-long')
          expect(over.noteSkeleton?.code).toBe('too-long');
      }),
      { numRuns: runs(300) },
    );
  });
});

const approval: TrackedApproval = trackedApproval('9XFHBJySvnhh', {
  slack: { messageTs: '1.1' },
  request: { title: 'x', createdAt: new Date(0) },
  outcome: { changedAt: new Date(0) },
});
