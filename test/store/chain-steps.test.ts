import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Department, StartApprovalInput } from '../../src/approvals/approval-types.ts';
import type { Delegation } from '../../src/approvals/delegation.ts';
import { type StepStarterDeps, startDueSteps } from '../../src/approvals/step-starter.ts';
import type { StepRule } from '../../src/approvals/steps.ts';
import { createApprovalRepository } from '../../src/store/approval-repository.ts';
import { createChainStore } from '../../src/store/chain-store.ts';
import { createRetentionStore } from '../../src/store/retention-store.ts';
import { openTestDatabase, TEST_DATABASES } from '../helpers/databases.ts';
import { runs } from '../helpers/fast-check-runs.ts';
import { approval, T0 } from '../helpers/store-fixtures.ts';

// Requests in several steps on real SQLite and Postgres: the lifecycle's decision records the
// next step due in its own transaction, and workers (two replicas, crashes at each point) start
// each step in the service at most once, exactly once when it should, and none after a rejection.

const REQUESTER = 'li.wei@corp.example';
const FIRST = 'maria.lopez@corp.example';
const LEASE = 60_000;
/** The lease of a worker that dies: long enough to mark its step, short enough to wait out. */
const CRASH_LEASE = 150;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const person = (login: string): StepRule => ({ kind: 'person', login });

/** The approval service as the worker sees it: every start recorded, numbered in order. */
function fakeService() {
  const starts: Array<StartApprovalInput & { djbh: string }> = [];
  return {
    starts,
    async startApproval(input: StartApprovalInput) {
      const djbh = `S${String(starts.length + 1).padStart(11, '0')}`;
      starts.push({ ...input, djbh });
      return { djbh };
    },
    async getDepartment(login: string): Promise<Department> {
      const none = { subDepartment: '', department: '', productLine: '' };
      return {
        login,
        name: 'Someone Known',
        mobile: '1',
        productLine: 'P',
        department: 'D',
        subDepartment: '',
        leaders: none,
      };
    },
  };
}

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(
    `steps of a request on ${database.name}${database.skipReason ? ` (skipped: ${database.skipReason})` : ''}`,
    () => {
      let testDb: Awaited<ReturnType<typeof openTestDatabase>>;
      const stores = () => {
        const { db, dialect } = testDb.handle;
        return {
          repo: createApprovalRepository(db, dialect),
          chains: createChainStore(db, dialect),
        };
      };
      const worker = (
        service: ReturnType<typeof fakeService>,
        delegations: Delegation[] = [],
      ): StepStarterDeps => {
        const { repo, chains } = stores();
        return {
          chains,
          service,
          firstStep: (djbh) => repo.getApproval(djbh),
          delegations: { inForceAt: async () => delegations },
          now: () => new Date(),
          noteLimit: 20_000,
          logger: { info: () => undefined, warn: () => undefined },
        };
      };
      const ask = (later: StepRule[], djbh = 'CHAIN0000001') =>
        stores().repo.createApproval(
          approval(djbh, {
            request: { locale: 'en-US' },
            parties: { requester: { login: REQUESTER }, approver: { login: FIRST } },
          }),
          T0,
          { laterSteps: later },
        );
      const decide = (djbh: string, decision: 'approved' | 'rejected') =>
        stores().repo.recordDecision(djbh, {
          decision,
          decidedBy: null,
          ended: true,
          now: new Date(),
          nextCheckAt: new Date(Date.now() + 3_600_000),
        });
      const stateOf = async () => (await stores().chains.ofApproval('CHAIN0000001'))?.steps ?? [];

      beforeAll(async () => {
        testDb = await openTestDatabase(database);
      });
      afterAll(() => testDb?.close());
      beforeEach(() => testDb.clear());

      it('makes the next step due with the decision, once however often it is recorded, and starts it once with the earlier steps in its note', async () => {
        await ask([person('chen.hao@corp.example')]);
        await decide('CHAIN0000001', 'approved');
        await decide('CHAIN0000001', 'approved');
        expect((await stateOf()).map((s) => s.state)).toEqual(['decided', 'due']);
        const service = fakeService();
        await Promise.all([
          startDueSteps(worker(service), { leaseMs: LEASE }),
          startDueSteps(worker(service), { leaseMs: LEASE }),
        ]);
        expect(service.starts.map((s) => s.approver)).toEqual(['chen.hao@corp.example']);
        expect(service.starts[0]?.note).toContain(`1. approved by ${FIRST} (CHAIN0000001)`);
        const [, second] = await stateOf();
        expect(second).toMatchObject({ state: 'started', djbh: service.starts[0]?.djbh });
        // The step's approval is an ordinary tracked approval, in the first step's thread.
        expect(await stores().repo.getApproval(second?.djbh ?? '')).toMatchObject({
          parties: {
            approver: { login: 'chen.hao@corp.example' },
            requester: { login: REQUESTER },
          },
        });
      });

      it('starts no later step after a rejection', async () => {
        await ask([person('chen.hao@corp.example'), person('zhou.lan@corp.example')]);
        await decide('CHAIN0000001', 'rejected');
        const service = fakeService();
        await startDueSteps(worker(service), { leaseMs: LEASE });
        expect(service.starts).toEqual([]);
        expect((await stateOf()).map((s) => s.state)).toEqual(['decided', 'waiting', 'waiting']);
      });

      it('starts a step whose worker died before calling the service once its lease runs out', async () => {
        await ask([person('chen.hao@corp.example')]);
        await decide('CHAIN0000001', 'approved');
        // A worker claims it for a moment and dies.
        expect(await stores().chains.claimDue(CRASH_LEASE)).toBeDefined();
        const service = fakeService();
        await startDueSteps(worker(service), { leaseMs: LEASE });
        expect(service.starts).toEqual([]);
        await sleep(CRASH_LEASE + 50);
        await startDueSteps(worker(service), { leaseMs: LEASE });
        expect(service.starts).toHaveLength(1);
      });

      it('never starts again a step whose worker died after calling: it is uncertain, said in the thread, and started once when the requester asks', async () => {
        await ask([person('chen.hao@corp.example')]);
        await decide('CHAIN0000001', 'approved');
        const { chains } = stores();
        const due = await chains.claimDue(CRASH_LEASE);
        expect(
          await chains.starting(due?.claim as never, 'chen.hao@corp.example', new Date()),
        ).toBe(true);
        await sleep(CRASH_LEASE + 50);
        const service = fakeService();
        const pass = await startDueSteps(worker(service), { leaseMs: LEASE });
        expect(pass.uncertain).toBe(1);
        expect(service.starts).toEqual([]);
        expect((await stateOf())[1]?.state).toBe('uncertain');
        const notes = await testDb.handle.db
          .selectFrom('announcements')
          .select('id')
          .where('kind', '=', 'step-uncertain')
          .execute();
        expect(notes.map((n) => n.id)).toEqual(['CHAIN0000001:step-uncertain:2']);
        await startDueSteps(worker(service), { leaseMs: LEASE });
        expect(service.starts).toEqual([]);
        expect(await chains.startAgain('CHAIN0000001', 2, new Date())).toBe(true);
        expect(await chains.startAgain('CHAIN0000001', 2, new Date())).toBe(false);
        await Promise.all([
          startDueSteps(worker(service), { leaseMs: LEASE }),
          startDueSteps(worker(service), { leaseMs: LEASE }),
        ]);
        expect(service.starts).toHaveLength(1);
      });

      it('skips the requester and whoever approved an earlier step, through their delegates, and ends approved', async () => {
        const away: Delegation = {
          from: 'zhou.lan@corp.example',
          to: FIRST,
          until: new Date(Date.now() + 86_400_000),
          setAt: T0,
        };
        await ask([
          person(REQUESTER),
          person('zhou.lan@corp.example'),
          person('chen.hao@corp.example'),
        ]);
        await decide('CHAIN0000001', 'approved');
        const service = fakeService();
        await startDueSteps(worker(service, [away]), { leaseMs: LEASE });
        const steps = await stateOf();
        expect(steps.map((s) => [s.state, s.skipReason ?? null])).toEqual([
          ['decided', null],
          ['skipped', 'requester'],
          ['skipped', 'approved-earlier'],
          ['started', null],
        ]);
        await decide(steps[3]?.djbh ?? '', 'approved');
        expect((await stores().chains.ofApproval('CHAIN0000001'))?.chain.outcome).toBe('approved');
      });

      it('is purged with its first step: nothing of the chain stays', async () => {
        await ask([person('chen.hao@corp.example')]);
        await decide('CHAIN0000001', 'rejected');
        await testDb.handle.db.updateTable('announcements').set({ state: 'sent' }).execute();
        const purged = await createRetentionStore(
          testDb.handle.db,
          testDb.handle.dialect,
        ).deleteEndedApprovals(new Date(Date.now() + 86_400_000), 10);
        expect(purged.approvals).toBe(1);
        expect(await testDb.handle.db.selectFrom('approval_chains').selectAll().execute()).toEqual(
          [],
        );
        expect(
          await testDb.handle.db.selectFrom('approval_chain_steps').selectAll().execute(),
        ).toEqual([]);
      });

      it('keeps every chain right over generated histories: decisions, handovers, skips, delegates, crashes at each point, two replicas', async () => {
        await fc.assert(
          fc.asyncProperty(historyArb, async (history) => {
            await testDb.clear();
            await checkHistory(history);
          }),
          { numRuns: runs(database.name === 'sqlite' ? 40 : 15) },
        );
      });

      /** One generated history against the store, with the model's expectations checked. */
      async function checkHistory(history: History) {
        const service = fakeService();
        const delegations: Delegation[] = history.delegateOf
          ? [
              {
                from: history.delegateOf.from,
                to: history.delegateOf.to,
                until: new Date(Date.now() + 86_400_000),
                setAt: T0,
              },
            ]
          : [];
        await ask(history.later.map(person));
        const crashCreated: number[] = [];
        let ended: number | null = null;
        for (const command of history.commands) {
          const steps = await stateOf();
          const current = steps.find((s) => s.state === 'started');
          switch (command.kind) {
            case 'decide':
              if (!current?.djbh) break;
              if (command.outcome === 'handover')
                await stores().repo.recordHandover(current.djbh, {
                  fromTerm: 0,
                  to: { login: 'tom.baker@corp.example', chatId: null },
                  former: [],
                  now: new Date(),
                  nextCheckAt: new Date(Date.now() + 3_600_000),
                });
              else if (command.outcome === 'closed') {
                await stores().repo.finish(current.djbh, 'ended', new Date());
                ended ??= current.position;
              } else {
                await decide(current.djbh, command.outcome);
                if (command.outcome === 'rejected') ended ??= current.position;
              }
              break;
            case 'work':
              await startDueSteps(worker(service, delegations), { leaseMs: LEASE });
              break;
            case 'two-replicas':
              await Promise.all([
                startDueSteps(worker(service, delegations), { leaseMs: LEASE }),
                startDueSteps(worker(service, delegations), { leaseMs: LEASE }),
              ]);
              break;
            case 'crash-before-call':
              await stores().chains.claimDue(CRASH_LEASE);
              await sleep(CRASH_LEASE + 20);
              break;
            case 'crash-after-call': {
              const due = await stores().chains.claimDue(CRASH_LEASE);
              if (!due) break;
              if (!(await stores().chains.starting(due.claim, 'x@corp.example', new Date()))) break;
              if (command.created) {
                await service.startApproval({
                  requester: REQUESTER,
                  approver: 'x@corp.example',
                  title: 't',
                  note: 'n',
                });
                crashCreated.push(due.claim.position);
              }
              await sleep(CRASH_LEASE + 20);
              break;
            }
            case 'look-and-start-again': {
              const uncertain = steps.find((s) => s.state === 'uncertain');
              // The requester looked in the service: only one not there is started again.
              if (uncertain && !crashCreated.includes(uncertain.position))
                await stores().chains.startAgain('CHAIN0000001', uncertain.position, new Date());
              break;
            }
          }
        }
        // Quiet: the workers run until nothing is due, approving each step as it starts.
        for (let i = 0; i < 8; i++) {
          await startDueSteps(worker(service, delegations), { leaseMs: LEASE });
          const current = (await stateOf()).find((s) => s.state === 'started');
          if (current?.djbh && ended === null) await decide(current.djbh, 'approved');
        }
        await checkChain(history, service, crashCreated, ended);
      }

      async function checkChain(
        history: History,
        service: ReturnType<typeof fakeService>,
        crashCreated: number[],
        ended: number | null,
      ) {
        const found = await stores().chains.ofApproval('CHAIN0000001');
        const steps = found?.steps ?? [];
        // Each step started in the service at most once: linked starts and lost ones together.
        const linked = steps.filter((s) => s.position > 1 && s.djbh).map((s) => s.position);
        for (const position of new Set([...linked, ...crashCreated]))
          expect([...linked, ...crashCreated].filter((p) => p === position)).toHaveLength(1);
        expect(service.starts).toHaveLength(linked.length + crashCreated.length);
        // None after the step that ended it.
        if (ended !== null) {
          for (const s of steps.filter((x) => x.position > ended))
            expect(['waiting', 'due', 'failed']).toContain(s.state);
          expect(found?.chain.outcome).toMatch(/rejected|stopped/);
          return;
        }
        // Otherwise every step is approved or rightly skipped, unless one is uncertain.
        if (steps.some((s) => s.state === 'uncertain')) return;
        expect(found?.chain.outcome).toBe('approved');
        const approvedBy: string[] = [];
        for (const s of steps) {
          const named = s.position === 1 ? FIRST : (history.later[s.position - 2] as string);
          const to =
            s.position > 1 &&
            history.delegateOf?.from === named &&
            history.delegateOf.to !== REQUESTER
              ? history.delegateOf.to
              : named;
          const skip = s.position > 1 && (to === REQUESTER || approvedBy.includes(to));
          expect(s.state).toBe(skip ? 'skipped' : 'decided');
          if (!skip) approvedBy.push(s.decidedBy ?? (s.approverLogin as string));
        }
      }
    },
  );
}

const PEOPLE = [REQUESTER, FIRST, 'chen.hao@corp.example', 'zhou.lan@corp.example'];

type Command =
  | { kind: 'decide'; outcome: 'approved' | 'rejected' | 'closed' | 'handover' }
  | { kind: 'work' }
  | { kind: 'two-replicas' }
  | { kind: 'crash-before-call' }
  | { kind: 'crash-after-call'; created: boolean }
  | { kind: 'look-and-start-again' };

interface History {
  later: string[];
  delegateOf: { from: string; to: string } | null;
  commands: Command[];
}

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('decide' as const),
      outcome: fc.constantFrom(
        'approved' as const,
        'approved' as const,
        'rejected' as const,
        'closed' as const,
        'handover' as const,
      ),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'work' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'two-replicas' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'crash-before-call' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('crash-after-call' as const), created: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'look-and-start-again' as const }) },
);

const historyArb: fc.Arbitrary<History> = fc.record({
  later: fc.array(fc.constantFrom(...PEOPLE), { minLength: 1, maxLength: 3 }),
  delegateOf: fc.option(
    fc
      .record({ from: fc.constantFrom(...PEOPLE.slice(2)), to: fc.constantFrom(...PEOPLE) })
      .filter((d) => d.from !== d.to),
    { nil: null },
  ),
  commands: fc.array(commandArb, { maxLength: 12 }),
});
