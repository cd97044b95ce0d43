import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shownDigest } from '../../src/approvals/step-confirmation.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { createChainStore } from '../../src/store/chain-store.ts';
import { createDelegationStore } from '../../src/store/delegation-store.ts';
import { createStepConfirmationStore } from '../../src/store/step-confirmation-store.ts';
import { createTemplateStore } from '../../src/store/template-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { findInEveryTable } from '../helpers/every-table.ts';
import { sampleApproval } from '../helpers/outbox-seed.ts';
import { seedReported } from '../helpers/report-seed.ts';

// `npm run people` as an operator runs it, compiled, on each dialect: one person exported, then
// erased, and then every table the schema has (listed from the database itself, so a table added
// later is scanned too) is searched for them, as the retention purge's test does.

const exec = promisify(execFile);
const ERIN = { chatId: 'U0ERASEERIN', login: 'Erin.Erase@corp.example' };
const T0 = new Date('2026-11-02T09:00:00Z');
const at = (hours: number) => new Date(T0.getTime() + hours * 3_600_000);
const NEEDLES = [ERIN.chatId, ERIN.login].map((n) => n.toLowerCase());
// Named only by requests in several steps, a template's and a workflow's later steps.
const CHRIS = { chatId: 'U0CHAINCHRIS', login: 'Chris.Chain@corp.example' };

async function people(url: string, args: string[]) {
  return exec('npm', ['run', '-s', 'people', '--', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', DATABASE_URL: url },
  })
    .then((r) => ({ ...r, code: 0 }))
    .catch((e: { code: number; stdout: string; stderr: string }) => e);
}

for (const which of TEST_DATABASES) {
  describe.skipIf(which.skipReason)(`npm run people on ${which.name}`, () => {
    let database: Awaited<ReturnType<typeof openTestDatabase>>;
    let store: ApprovalStores;
    beforeAll(async () => {
      database = await openTestDatabase(which);
      const { db, dialect } = database.handle;
      store = createApprovalStores(db, dialect);
      await createAccountLinkStore(db, dialect).link({
        slackUserId: ERIN.chatId,
        login: ERIN.login,
        name: 'ERIN',
        teamId: 'T1',
        linkedAt: T0,
      });
      const decided = (hours: number, by = 'maria@corp.example') => ({
        decision: 'approved' as const,
        by,
        seenAt: at(hours),
      });
      // Asked by Erin (her Slack id and login, the login cased otherwise), reminded, decided.
      await seedReported(
        store,
        'PPL000000001',
        {
          request: { createdAt: T0, title: 'Erin’s parental leave', note: 'from March' },
          parties: {
            requester: { slackId: ERIN.chatId, login: 'erin.erase@CORP.example' },
            approver: { login: 'maria@corp.example', slackId: 'U0MARIA' },
          },
        },
        { reminders: 1, decided: decided(2) },
      );
      // Decided by Erin as its approver; her DM was told.
      await seedReported(
        store,
        'PPL000000002',
        {
          request: { createdAt: T0, title: 'Sam’s laptop' },
          parties: {
            requester: { slackId: 'U0SAM', login: 'sam@corp.example' },
            approver: { login: ERIN.login, slackId: ERIN.chatId },
          },
        },
        { reminders: 1, decided: decided(3, ERIN.login) },
      );
      // Escalated to Erin, then handed over from her to Lee (she had it before), decided by Lee.
      await seedReported(
        store,
        'PPL000000003',
        {
          request: { createdAt: T0 },
          parties: { approver: { login: 'lee@corp.example', slackId: 'U0LEE' } },
        },
        { escalatedTo: ERIN, decided: decided(4, 'lee@corp.example') },
      );
      await sql`update tracked_approvals set former_approvers = ${JSON.stringify([ERIN])}, approver_term = 1 where djbh = 'PPL000000003'`.execute(
        db,
      );
      // Still open, asked by Erin: left by the first erase.
      await seedReported(store, 'PPL000000004', {
        request: { createdAt: at(5) },
        parties: { requester: { slackId: ERIN.chatId, login: ERIN.login } },
      });
      // Asked by Erin in her DM with the app, decided: its request message (in her DM) was edited
      // to show the decision, on the DM's edit lane (`edit:dm:login:…`), which names her too.
      await seedReported(
        store,
        'PPL000000005',
        {
          request: { createdAt: T0 },
          slack: { channelId: 'D0ERIN' },
          parties: { requester: { slackId: ERIN.chatId, login: ERIN.login } },
        },
        { decided: decided(6) },
      );
      // A workflow confirmation she answered, a template she made naming her as its approver.
      const confirmations = createStepConfirmationStore(db);
      await confirmations.create({
        executionId: 'Fx0PPL',
        teamId: 'T1',
        requesterChatId: ERIN.chatId,
        startedByChatId: null,
        approverChatId: 'U0MARIA',
        title: 'Leave',
        note: 'n',
        channelId: 'C1',
        locale: 'en-US',
        createdAt: T0,
        expiresAt: at(24),
        shownDigest: shownDigest('Leave', 'n'),
      });
      const templates = createTemplateStore(db, dialect);
      const added = await templates.add(
        'C1',
        { name: 'Leave', titlePrefix: 'Leave:', noteSkeleton: '', approverChatId: ERIN.chatId },
        ERIN.chatId,
        T0,
      );
      expect(added).toMatchObject({ ok: true });
      // Away with a delegate, and someone else's delegate herself.
      const delegations = createDelegationStore(db);
      await delegations.set({
        from: ERIN.login,
        to: 'maria@corp.example',
        until: at(48),
        setAt: T0,
      });
      await delegations.set({ from: 'sam@corp.example', to: ERIN.login, until: at(48), setAt: T0 });
    }, 60_000);
    afterAll(() => database?.close());

    /** Every table of the schema, and where Erin is found in its rows. */
    async function scan(): Promise<string[]> {
      const { tables, found } = await findInEveryTable(database.handle.db, NEEDLES);
      expect(tables).toContain('template_changes');
      return found;
    }

    it('exports everything held about her, found by either of her names', async () => {
      const byLogin = await people(database.url, ['export', 'erin.erase@corp.example']);
      const answer = JSON.parse(byLogin.stdout) as Record<string, Array<Record<string, unknown>>>;
      // One login however it was cased (compared without case, as everywhere).
      expect(answer.person).toEqual({ slackIds: [ERIN.chatId], logins: [ERIN.login] });
      expect(answer.approvals?.map((a) => a.djbh)).toEqual([
        'PPL000000001',
        'PPL000000002',
        'PPL000000003',
        'PPL000000004',
        'PPL000000005',
      ]);
      expect(answer.approvals?.[0]).toMatchObject({ title: 'Erin’s parental leave' });
      expect(answer['account links']).toHaveLength(1);
      expect(answer['workflow confirmations']).toHaveLength(1);
      expect(answer['templates naming them']).toHaveLength(1);
      expect(answer['template changes by them']).toHaveLength(1);
      expect(answer.delegations).toHaveLength(2);
      // Her DM was told of PPL000000002 and reminded of it.
      expect(answer['announcements to them']?.map((a) => a.id)).toEqual(
        expect.arrayContaining([
          'PPL000000002:approver-dm',
          'PPL000000002:reminder:1',
          'PPL000000005:parent-update:approved',
        ]),
      );
      const byId = await people(database.url, ['export', ERIN.chatId]);
      expect(JSON.parse(byId.stdout).approvals).toHaveLength(5);
    }, 120_000);

    it('erases her: nothing of her in any table, the audit trail kept without her', async () => {
      expect((await scan()).length).toBeGreaterThan(0);
      const first = await people(database.url, ['erase', ERIN.chatId]);
      // The open approval is left, and said.
      expect(first).toMatchObject({ code: 1 });
      expect(first.stdout).toContain('Still open, left as they are: PPL000000004');
      expect(
        (await scan()).every(
          (f) =>
            f.startsWith('tracked_approvals') ||
            f.startsWith('announcements') ||
            f.startsWith('lane_leases'),
        ),
      ).toBe(true);

      // It ends; erase again.
      await store.recordDecision('PPL000000004', {
        decision: 'rejected',
        decidedBy: 'b@corp.example',
        ended: true,
        now: at(30),
        nextCheckAt: at(30),
      });
      const second = await people(database.url, ['erase', ERIN.login]);
      expect(second).toMatchObject({ code: 0 });
      expect(await scan()).toEqual([]);

      // What stays: each approval, its decision and times, and the others in it; her words gone.
      const { db } = database.handle;
      const kept = await db.selectFrom('tracked_approvals').selectAll().orderBy('djbh').execute();
      expect(kept.map((r) => r.djbh)).toEqual([
        'PPL000000001',
        'PPL000000002',
        'PPL000000003',
        'PPL000000004',
        'PPL000000005',
      ]);
      expect(kept[0]).toMatchObject({
        decision: 'approved',
        approver_login: 'maria@corp.example',
        title: '',
        note: '',
      });
      expect(kept[0]?.requester_login).toMatch(/^erased-[0-9a-f]{10}$/);
      expect(kept[1]).toMatchObject({
        title: 'Sam’s laptop',
        requester_login: 'sam@corp.example',
        decision: 'approved',
      });
      expect(kept[1]?.decided_by).toMatch(/^erased-/);
      expect(kept[2]).toMatchObject({ approver_login: 'lee@corp.example' });
      // Asked in her DM: the DM's id (Slack says whose it is) is gone too.
      expect(kept[4]?.channel_id).toMatch(/^erased-/);
      // The template still works, without a suggested approver.
      const template = await db.selectFrom('request_templates').selectAll().executeTakeFirst();
      expect(template).toMatchObject({ name: 'Leave', approver_slack_id: null });
      const again = await people(database.url, ['export', ERIN.chatId]);
      expect(JSON.parse(again.stdout).approvals).toEqual([]);
    }, 120_000);

    it('covers requests in several steps: exported, erased once each has ended, nothing of the login left', async () => {
      const { db, dialect } = database.handle;
      const chris = { login: CHRIS.login, slackId: CHRIS.chatId };
      const maria = { login: 'maria@corp.example', slackId: 'U0MARIA' };
      const sam = { login: 'sam@corp.example', slackId: 'U0SAM' };
      const decide = (djbh: string, decision: 'approved' | 'rejected', by: string, hours: number) =>
        store.recordDecision(djbh, {
          decision,
          decidedBy: by,
          ended: true,
          now: at(hours),
          nextCheckAt: at(hours),
        });
      const chainOf = (djbh: string, parties: object, laterSteps: object[]) =>
        store.createApproval(
          sampleApproval(djbh, { request: { createdAt: T0, title: `${djbh} title` }, parties }),
          T0,
          { laterSteps: laterSteps as never },
        );
      // Asked by Chris, rejected at step 1: ended.
      await chainOf('PPL000000011', { requester: chris, approver: maria }, [
        { kind: 'person', login: 'lee@corp.example' },
      ]);
      await decide('PPL000000011', 'rejected', maria.login, 1);
      // Sam's, whose step 2 names Chris (cased otherwise): step 1 approved, step 2 due, going on.
      await chainOf('PPL000000012', { requester: sam, approver: maria }, [
        { kind: 'person', login: 'chris.chain@CORP.example' },
      ]);
      await decide('PPL000000012', 'approved', maria.login, 2);
      // Sam's, rejected by Chris at step 1: ended.
      await chainOf('PPL000000013', { requester: sam, approver: chris }, [
        { kind: 'leader', level: 'second' },
      ]);
      await decide('PPL000000013', 'rejected', CHRIS.login, 3);
      // A template of Sam's and a workflow run of Sam's whose later steps name Chris.
      const added = await createTemplateStore(db, dialect).add(
        'C1',
        {
          name: 'Purchase',
          titlePrefix: 'Purchase:',
          noteSkeleton: '',
          approverChatId: null,
          laterSteps: [
            { kind: 'person', login: CHRIS.login },
            { kind: 'leader', level: 'second' },
          ],
        },
        'U0SAM',
        T0,
      );
      expect(added).toMatchObject({ ok: true });
      await createStepConfirmationStore(db).create({
        executionId: 'Fx0CHAIN',
        teamId: 'T1',
        requesterChatId: 'U0SAM',
        startedByChatId: null,
        approverChatId: 'U0MARIA',
        title: 'Disks',
        note: 'n',
        channelId: 'C1',
        locale: 'en-US',
        createdAt: T0,
        expiresAt: at(24),
        shownDigest: shownDigest('Disks', 'n'),
        laterSteps: [{ kind: 'person', login: CHRIS.login }],
      });
      const needles = [CHRIS.chatId, CHRIS.login].map((n) => n.toLowerCase());

      const exported = JSON.parse((await people(database.url, ['export', CHRIS.login])).stdout);
      expect(exported['requests in several steps'].map((c: { id: string }) => c.id)).toEqual([
        'PPL000000011',
        'PPL000000012',
        'PPL000000013',
      ]);
      expect(
        exported['steps of requests'].map(
          (s: { chain_id: string; position: number }) => `${s.chain_id}/${s.position}`,
        ),
      ).toEqual(['PPL000000012/2', 'PPL000000013/1']);
      expect(exported['template steps naming them']).toHaveLength(1);
      expect(exported['workflow confirmations naming them in later steps']).toHaveLength(1);

      // Sam's request is still going on: left, and said.
      const first = await people(database.url, ['erase', CHRIS.login]);
      expect(first).toMatchObject({ code: 1 });
      expect(first.stdout).toContain('Still open, left as they are: PPL000000012');
      const left = (await findInEveryTable(db, needles)).found;
      expect(left.length).toBeGreaterThan(0);
      expect(left.every((f) => f.startsWith('approval_chain_steps'))).toBe(true);

      // Its step 2 could not start: the request stopped, naming Chris as that step's approver.
      const chains = createChainStore(db, dialect);
      const due = await chains.claimDue(60_000);
      expect(due?.claim).toMatchObject({ chainId: 'PPL000000012', position: 2 });
      expect(await chains.failed(due?.claim as never, 'chris.chain@CORP.example', at(4))).toBe(
        true,
      );
      const second = await people(database.url, ['erase', CHRIS.login]);
      expect(second).toMatchObject({ code: 0 });
      expect((await findInEveryTable(db, needles)).found).toEqual([]);

      // What stays: each request's outcome and steps, the others in them; Chris's words gone.
      const kept = await db.selectFrom('approval_chains').selectAll().orderBy('id').execute();
      expect(kept.map((c) => [c.id, c.outcome])).toEqual([
        ['PPL000000011', 'rejected'],
        ['PPL000000012', 'stopped'],
        ['PPL000000013', 'rejected'],
      ]);
      expect(kept[0]).toMatchObject({ title: '', note: '' });
      expect(kept[0]?.requester_login).toMatch(/^erased-/);
      expect(kept[2]).toMatchObject({ requester_login: sam.login, title: 'PPL000000013 title' });
      const steps = await db
        .selectFrom('approval_chain_steps')
        .selectAll()
        .where('chain_id', 'in', ['PPL000000012', 'PPL000000013'])
        .orderBy('chain_id')
        .orderBy('position')
        .execute();
      // Each erase has its own pseudonym: the ended ones went in the first, Sam's in the second.
      const firstPseudonym = kept[0]?.requester_login;
      const later = steps[1]?.approver_login;
      expect(later).toMatch(/^erased-/);
      expect(later).not.toBe(firstPseudonym);
      expect(steps.map((s) => [s.state, s.approver_login, s.decided_by])).toEqual([
        ['decided', maria.login, maria.login],
        ['failed', later, null],
        ['decided', firstPseudonym, firstPseudonym],
        ['waiting', null, null],
      ]);
      expect(JSON.parse(steps[1]?.rule ?? '')).toEqual({ kind: 'person', login: later });
      // The template keeps working without the step; the workflow's question is gone.
      const template = await db
        .selectFrom('request_templates')
        .selectAll()
        .where('name', '=', 'Purchase')
        .executeTakeFirst();
      expect(JSON.parse(template?.later_steps ?? '')).toEqual([
        { kind: 'leader', level: 'second' },
      ]);
      expect(
        await db
          .selectFrom('step_confirmations')
          .selectAll()
          .where('execution_id', '=', 'Fx0CHAIN')
          .execute(),
      ).toEqual([]);
    }, 120_000);
  });
}
