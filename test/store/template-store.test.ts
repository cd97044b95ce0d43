import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  applyTemplate,
  checkTemplateDraft,
  TEMPLATE_LIMITS,
  type TemplateDraft,
  type TemplateStore,
} from '../../src/approvals/request-templates.ts';
import { purgeExpired } from '../../src/approvals/retention.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { createRetentionStore } from '../../src/store/retention-store.ts';
import { createTemplateStore } from '../../src/store/template-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';

const T0 = new Date('2026-11-25T10:00:00Z');
const later = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

const draft = (name: string, more: Partial<TemplateDraft> = {}): TemplateDraft => ({
  name,
  titlePrefix: `[${name}]`,
  noteSkeleton: 'Who:\nWhat:\nWhy:',
  approverChatId: null,
  ...more,
});

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `request templates on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      let store: TemplateStore;

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
        store = createTemplateStore(testDb.handle.db, testDb.handle.dialect);
      });
      afterAll(async () => {
        await testDb.close();
      });
      beforeEach(async () => {
        await testDb.clear();
      });

      it('adds, reads back, edits and removes a template, recording who did each and when', async () => {
        const added = await store.add(
          'C0GENERAL',
          draft('Access request', { approverChatId: 'U0MARIA', noteSkeleton: '<!channel> & *x*' }),
          'U0SAM',
          T0,
        );
        if (!added.ok) throw new Error('not added');
        expect(await store.get(added.template.id)).toEqual({
          id: added.template.id,
          channelId: 'C0GENERAL',
          name: 'Access request',
          titlePrefix: '[Access request]',
          noteSkeleton: '<!channel> & *x*',
          approverChatId: 'U0MARIA',
          createdBy: 'U0SAM',
          createdAt: T0,
          updatedBy: 'U0SAM',
          updatedAt: T0,
          removedBy: null,
          removedAt: null,
        });
        const edited = await store.update(
          added.template.id,
          draft('Access', { titlePrefix: '请假' }),
          'U0LI',
          later(1),
        );
        expect(edited.ok && edited.template).toMatchObject({
          name: 'Access',
          titlePrefix: '请假',
          approverChatId: null,
          createdBy: 'U0SAM',
          updatedBy: 'U0LI',
          updatedAt: later(1),
        });
        expect(await store.remove(added.template.id, 'U0PRIYA', later(2))).toBe(true);
        expect(await store.remove(added.template.id, 'U0PRIYA', later(3))).toBe(false);
        expect(await store.list('C0GENERAL')).toEqual([]);
        // Kept as removed: a request made from it still names it.
        expect(await store.get(added.template.id)).toMatchObject({
          name: 'Access',
          removedBy: 'U0PRIYA',
          removedAt: later(2),
        });
        expect(await store.history('C0GENERAL', 10)).toEqual([
          {
            templateId: added.template.id,
            name: 'Access',
            action: 'removed',
            by: 'U0PRIYA',
            at: later(2),
          },
          {
            templateId: added.template.id,
            name: 'Access',
            action: 'edited',
            by: 'U0LI',
            at: later(1),
          },
          {
            templateId: added.template.id,
            name: 'Access request',
            action: 'added',
            by: 'U0SAM',
            at: T0,
          },
        ]);
      });

      it('lists a channel’s live templates by name, and only that channel’s', async () => {
        await store.add('C0GENERAL', draft('purchase'), 'U0SAM', T0);
        await store.add('C0GENERAL', draft('Access request'), 'U0SAM', T0);
        await store.add('C0RANDOM', draft('Elsewhere'), 'U0SAM', T0);
        expect((await store.list('C0GENERAL')).map((t) => t.name)).toEqual([
          'Access request',
          'purchase',
        ]);
        expect((await store.history('C0RANDOM', 10)).map((c) => c.name)).toEqual(['Elsewhere']);
      });

      it('refuses a second template of the same name in a channel, whatever its case, and writes nothing', async () => {
        const first = await store.add('C0GENERAL', draft('Purchase'), 'U0SAM', T0);
        expect(await store.add('C0GENERAL', draft(' purchase'), 'U0LI', T0)).toEqual({
          ok: false,
          field: 'name',
          problem: { code: 'name-taken' },
        });
        // The same name in another channel is another template.
        expect((await store.add('C0RANDOM', draft('Purchase'), 'U0LI', T0)).ok).toBe(true);
        const other = await store.add('C0GENERAL', draft('Other'), 'U0SAM', T0);
        if (!other.ok || !first.ok) throw new Error('not added');
        expect(await store.update(other.template.id, draft('PURCHASE'), 'U0LI', T0)).toMatchObject({
          ok: false,
          problem: { code: 'name-taken' },
        });
        expect((await store.get(other.template.id))?.name).toBe('Other');
        // Once removed, its name is free again.
        await store.remove(first.template.id, 'U0SAM', later(1));
        expect((await store.add('C0GENERAL', draft('Purchase'), 'U0LI', later(2))).ok).toBe(true);
        expect(await store.history('C0GENERAL', 10)).toHaveLength(4);
      });

      it('refuses a name that only looks different: an accent typed apart, full-width letters, invisible characters', async () => {
        const cafe = await store.add('C0GENERAL', draft('Cafe\u0301'), 'U0SAM', T0);
        expect(cafe.ok).toBe(true);
        const taken = { ok: false, field: 'name', problem: { code: 'name-taken' } };
        expect(await store.add('C0GENERAL', draft('Caf\u00e9'), 'U0LI', T0)).toEqual(taken);
        expect(await store.add('C0GENERAL', draft('Caf\u00e9\u200b'), 'U0LI', T0)).toEqual(taken);
        expect(await store.add('C0GENERAL', draft('C\u00adaf\u2060\u00e9'), 'U0LI', T0)).toEqual(
          taken,
        );
        expect(await store.add('C0GENERAL', draft('\uff23\uff41\uff46\u00e9'), 'U0LI', T0)).toEqual(
          taken,
        );
        const other = await store.add('C0GENERAL', draft('Other'), 'U0SAM', T0);
        if (!other.ok) throw new Error('not added');
        expect(
          await store.update(other.template.id, draft('\u200bCAFÉ'), 'U0LI', T0),
        ).toMatchObject({ ok: false, problem: { code: 'name-taken' } });
        expect((await store.list('C0GENERAL')).map((t) => t.name)).toEqual(['Cafe\u0301', 'Other']);
      });

      it('lists changes made in the same millisecond newest first, in the order they were made', async () => {
        const added = await store.add('C0GENERAL', draft('Purchase'), 'U0SAM', T0);
        if (!added.ok) throw new Error('not added');
        await store.update(added.template.id, draft('Purchases'), 'U0LI', T0);
        await store.update(added.template.id, draft('Buying'), 'U0SAM', T0);
        await store.remove(added.template.id, 'U0LI', T0);
        for (let i = 0; i < 3; i++)
          expect((await store.history('C0GENERAL', 10)).map((c) => [c.action, c.name])).toEqual([
            ['removed', 'Buying'],
            ['edited', 'Buying'],
            ['edited', 'Purchases'],
            ['added', 'Purchase'],
          ]);
      });

      it(`keeps a channel to ${TEMPLATE_LIMITS.perChannel} templates, even when many are added at once`, async () => {
        const results = await Promise.all(
          Array.from({ length: TEMPLATE_LIMITS.perChannel + 5 }, (_, i) =>
            store.add('C0GENERAL', draft(`T${i}`), 'U0SAM', T0),
          ),
        );
        expect(results.filter((r) => r.ok)).toHaveLength(TEMPLATE_LIMITS.perChannel);
        expect(results.find((r) => !r.ok)).toEqual({
          ok: false,
          field: 'name',
          problem: { code: 'too-many', limit: TEMPLATE_LIMITS.perChannel },
        });
        expect(await store.list('C0GENERAL')).toHaveLength(TEMPLATE_LIMITS.perChannel);
        expect(await store.history('C0GENERAL', 100)).toHaveLength(TEMPLATE_LIMITS.perChannel);
      });

      it('refuses to edit a removed template', async () => {
        const added = await store.add('C0GENERAL', draft('Gone'), 'U0SAM', T0);
        if (!added.ok) throw new Error('not added');
        await store.remove(added.template.id, 'U0SAM', later(1));
        expect(await store.update(added.template.id, draft('Back'), 'U0SAM', later(2))).toEqual({
          ok: false,
          field: 'name',
          problem: { code: 'gone' },
        });
      });

      it('records the template a request was made from, and the retention purge leaves templates alone', async () => {
        const approvals = createApprovalStores(testDb.handle.db, testDb.handle.dialect);
        const added = await store.add('C0GENERAL', draft('Purchase'), 'U0SAM', T0);
        await approvals.createApproval(
          {
            djbh: 'T1',
            teamId: 'T0',
            slack: { channelId: 'C0GENERAL' },
            parties: {
              requester: { slackId: 'U0SAM', login: 'sam' },
              approver: { login: 'maria', slackId: null },
            },
            request: {
              title: '[Purchase] Chairs',
              note: 'n',
              locale: 'en-US',
              createdAt: T0,
              template: { id: null, name: 'Purchase' },
            },
          },
          T0,
        );
        expect((await approvals.getApproval('T1'))?.request.template?.name).toBe('Purchase');
        await purgeExpired(
          createRetentionStore(testDb.handle.db, testDb.handle.dialect),
          { retentionDays: 1 },
          later(10 * 365 * 24 * 60),
        );
        expect(added.ok && (await store.get(added.template.id))).toBeTruthy();
        expect(await store.history('C0GENERAL', 10)).toHaveLength(1);
      });

      it('lets retention take a removed template with its changes, and a live one’s changes but its last', async () => {
        const DAY = 24 * 60;
        const kept = await store.add('C0GENERAL', draft('Kept'), 'U0SAM', T0);
        const gone = await store.add('C0GENERAL', draft('Gone'), 'U0MARIA', T0);
        if (!kept.ok || !gone.ok) throw new Error('not added');
        await store.update(
          kept.template.id,
          draft('Kept', { titlePrefix: 'K' }),
          'U0LEE',
          later(DAY),
        );
        await store.update(
          kept.template.id,
          draft('Kept', { titlePrefix: 'K2' }),
          'U0CHEN',
          later(2 * DAY),
        );
        await store.remove(gone.template.id, 'U0MARIA', later(2 * DAY));
        // A change within retention stays; older ones go, but a live template's last.
        const counts = await purgeExpired(
          createRetentionStore(testDb.handle.db, testDb.handle.dialect),
          { retentionDays: 10 },
          later(12 * DAY + 60),
        );
        expect(counts).toMatchObject({ templates: 1, templateChanges: 4 });
        expect(await store.get(gone.template.id)).toBeUndefined();
        expect(await store.get(kept.template.id)).toMatchObject({ titlePrefix: 'K2' });
        const history = await store.history('C0GENERAL', 10);
        expect(history.map((c) => c.by)).toEqual(['U0CHEN']);
      });
    },
  );
}

describe('template drafts', () => {
  it('requires a name and keeps each text within its limit, counted in characters', () => {
    expect(
      checkTemplateDraft({ name: '  ', titlePrefix: '', noteSkeleton: '', approverChatId: null }),
    ).toEqual({ ok: false, problems: { name: { code: 'required' } } });
    const long = checkTemplateDraft({
      name: '假'.repeat(51),
      titlePrefix: 'x'.repeat(101),
      noteSkeleton: 'y'.repeat(2001),
      approverChatId: null,
    });
    expect(long).toEqual({
      ok: false,
      problems: {
        name: { code: 'too-long', limit: 50, length: 51 },
        titlePrefix: { code: 'too-long', limit: 100, length: 101 },
        noteSkeleton: { code: 'too-long', limit: 2000, length: 2001 },
      },
    });
    expect(
      checkTemplateDraft({
        name: ' 请假 ',
        titlePrefix: '假'.repeat(100),
        noteSkeleton: '',
        approverChatId: null,
      }),
    ).toMatchObject({ ok: true, draft: { name: '请假' } });
  });

  it('puts the prefix before the title, swaps it when another template is picked, and never wipes a written note', () => {
    const access = { titlePrefix: '[Access]', noteSkeleton: 'System:\nWhy:' };
    const purchase = { titlePrefix: '[Purchase]', noteSkeleton: 'Item:\nCost:' };
    expect(applyTemplate({ title: '', note: '' }, access)).toEqual({
      title: '[Access]',
      note: 'System:\nWhy:',
      noteKept: false,
    });
    expect(applyTemplate({ title: 'VPN', note: '' }, access).title).toBe('[Access] VPN');
    expect(
      applyTemplate({ title: '[Access] VPN', note: 'System:\nWhy:' }, purchase, access),
    ).toEqual({ title: '[Purchase] VPN', note: 'Item:\nCost:', noteKept: false });
    expect(applyTemplate({ title: '[Access] VPN', note: 'Mine' }, access)).toEqual({
      title: '[Access] VPN',
      note: 'Mine',
      noteKept: true,
    });
  });
});
