import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApprovalServiceClient } from '../../src/approval-service/approval-service-client.ts';
import { createAnnouncementDispatcher } from '../../src/approvals/announcement-dispatcher.ts';
import type { ApprovalService } from '../../src/approvals/approval-types.ts';
import { pollOnce } from '../../src/poller/poll-once.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { scheduleOf } from '../helpers/store-fixtures.ts';

// One poll pass against the simulator over HTTP and a real SQLite store. Slack is out of the
// picture here: announcements are delivered to a recorder (the end-to-end tests cover Slack).

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const DAY = 86_400_000;
const options = {
  concurrency: 3,
  maxIntervalMs: 3_600_000,
  giveUpAfterMs: 30 * DAY,
  passBudgetMs: 10_000,
  leaseMs: 20_000,
};

let sim: Simulator;
let dir: string;
let db: DatabaseHandle;
let store: ApprovalStores;
let service: ApprovalService;
let delivered: string[];

beforeEach(async () => {
  sim = await createSimulator({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'poll-'));
  db = await openDatabase(join(dir, 'a.db'));
  store = createApprovalStores(db.db, db.dialect);
  service = createApprovalServiceClient({
    baseUrl: sim.url,
    appName: 'slack-approvals',
    appKey: 'sandbox-app-key',
    timeoutMs: 2000,
    retryDelaysMs: [],
  });
  delivered = [];
});
afterEach(async () => {
  await db.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A dispatcher over the real store that records what it would post. */
function dispatcher() {
  return createAnnouncementDispatcher(
    {
      store,
      announcer: {
        deliver: async (a) => {
          delivered.push(a.id);
          return { channel: 'C1', ts: `1.${delivered.length}` };
        },
        findDelivered: async () => undefined,
        checkCredentials: async () => 'ok',
      },
      logger: quiet,
      now: () => new Date(),
    },
    {
      leaseMs: 60_000,
      callTimeoutMs: 1000,
      retryForMs: 86_400_000,
      laneIntervalMs: 0,
      concurrency: 4,
      idleMs: 1000,
    },
  );
}

async function open(count: number, now: Date): Promise<string[]> {
  const djbhs: string[] = [];
  for (let i = 0; i < count; i++) {
    const { djbh } = await service.startApproval({
      requester: 'sam.taylor@corp.example',
      approver: 'maria.lopez@corp.example',
      title: `t${i}`,
      note: 'n',
    });
    await store.createApproval(
      {
        djbh,
        teamId: 'T',
        slack: { channelId: 'C1' },
        parties: {
          requester: { slackId: 'U1', login: 'sam.taylor@corp.example' },
          approver: { login: 'maria.lopez@corp.example', slackId: 'U2' },
        },
        request: { title: `t${i}`, note: 'n', locale: 'en-US', createdAt: now },
      },
      now,
    );
    djbhs.push(djbh);
  }
  return djbhs;
}

describe('pollOnce', () => {
  it('asks the service about at most `concurrency` approvals at a time', async () => {
    const now = new Date();
    await open(10, now);
    sim.setFaults('approval-status', { latencyMs: 50 });
    const counts = await pollOnce({ store, service, logger: quiet }, options, now);
    expect(counts.checked).toBe(10);
    expect(sim.peakConcurrency()['approval-status']).toBe(3);
  });

  it('stops asking after three checks in a row find the service down, and announces nothing', async () => {
    const now = new Date();
    await open(10, now);
    sim.setFaults('approval-status', { outage: true });
    const before = sim.requestCounts()['approval-status'];
    const counts = await pollOnce(
      { store, service, logger: quiet },
      { ...options, concurrency: 1 },
      now,
    );
    // The first claim took 8 (eight times the concurrency, at least 8): 3 failed, 5 deferred, and
    // the pass claimed no more once the service was found down.
    expect(counts).toMatchObject({ failed: 3, deferred: 5, checked: 0, changed: 0 });
    expect(sim.requestCounts()['approval-status'] - before).toBe(3);
    expect(await store.pendingAnnouncements(100)).toHaveLength(20);
    // Deferred approvals are due again soon, not lost.
    sim.clearFaults();
    const later = await pollOnce(
      { store, service, logger: quiet },
      options,
      new Date(now.getTime() + 31_000),
    );
    expect(later.checked).toBe(10);
  });

  it('ends the pass at a store error in one worker: the others take nothing more, what they checked is written, and it settles after the last of them', async () => {
    const now = new Date();
    const [failing = '', ...others] = await open(10, now);
    sim.decide(failing, 'agree');
    sim.setFaults('approval-status', { latencyMs: 50 });
    let settled = false;
    const lateCalls: string[] = [];
    const answered: string[] = [];
    const watched = <T extends object>(target: T, name: string): T =>
      new Proxy(target, {
        get(object, key, receiver) {
          const value = Reflect.get(object, key, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (settled) lateCalls.push(`${name}.${String(key)}`);
            return value.apply(object, args);
          };
        },
      });
    const failingStore = watched(
      {
        ...store,
        async recordDecision() {
          // The database went away while the decision was being recorded.
          throw Object.assign(new Error('Connection terminated unexpectedly'), {
            code: 'ECONNRESET',
          });
        },
      },
      'store',
    );
    const countingService = watched(
      {
        getStatus: async (djbh: string) => {
          const status = await service.getStatus(djbh);
          answered.push(djbh);
          return status;
        },
      },
      'service',
    );
    const passing = pollOnce(
      { store: failingStore, service: countingService, logger: quiet },
      options,
      now,
    );
    await expect(passing).rejects.toThrow('Connection terminated unexpectedly');
    settled = true;
    // The workers checking when the error came finish their checks before the pass settles …
    const checkedBefore = answered.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(lateCalls).toEqual([]);
    expect(answered).toHaveLength(checkedBefore);
    // … and take no more: at most the two other workers' checks under way went on.
    expect(answered.length).toBeLessThan(10);
    // What they checked was written: checked at `now`, next due later.
    for (const djbh of answered.filter((d) => d !== failing)) {
      const schedule = await scheduleOf(db.db, djbh);
      expect(schedule?.lastCheckedAt?.getTime()).toBe(now.getTime());
      expect(schedule?.nextCheckAt.getTime()).toBeGreaterThan(now.getTime());
    }
    // The decision whose recording failed is not recorded: its claim runs out and the next pass
    // after that sees it again.
    expect((await store.getApproval(failing))?.outcome.decision).toBe('pending');
    expect(others).toHaveLength(9);
  });

  it('records each change once and announces it once, however many passes see it', async () => {
    const now = new Date();
    const [djbh = ''] = await open(1, now);
    const d = dispatcher();
    sim.decide(djbh, 'refuse');
    await pollOnce({ store, service, logger: quiet }, options, now);
    await d.drain(now);
    await pollOnce({ store, service, logger: quiet }, options, new Date(now.getTime() + 60_000));
    await d.drain(new Date(now.getTime() + 60_000));
    expect(delivered.filter((id) => id === `${djbh}:decision:rejected`)).toHaveLength(1);
    expect((await store.getApproval(djbh))?.outcome.tracking).toBe('finished');
  });

  it('records a handover with one write, and costs the other checks nothing more', async () => {
    const now = new Date();
    const [moved = '', recased = '', ...rest] = await open(10, now);
    sim.reassign(moved, 'alex.kim@corp.example');
    // The same approver, spelled otherwise: no handover (person.ts's one rule for logins).
    sim.reassign(recased, 'Maria.Lopez@corp.example');
    const calls: string[] = [];
    const counted = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(name));
          return value.apply(target, args);
        };
      },
    });
    const before = sim.requestCounts()['approval-status'] ?? 0;
    const counts = await pollOnce({ store: counted, service, logger: quiet }, options, now);
    expect(counts).toMatchObject({ checked: 10, changed: 1, changedDjbhs: [moved] });
    expect(sim.requestCounts()['approval-status'] - before).toBe(10);
    // One claim, the handover's write, and the unchanged checks in batches of `concurrency`.
    expect(calls.filter((c) => c === 'recordHandover')).toHaveLength(1);
    expect(
      calls.filter((c) => !['claimDue', 'recordHandover', 'recordChecks'].includes(c)),
    ).toEqual([]);
    expect(await store.getApproval(moved)).toMatchObject({
      parties: { approver: { login: 'alex.kim@corp.example', term: 1 } },
    });
    for (const djbh of [recased, ...rest])
      expect(await store.getApproval(djbh)).toMatchObject({
        parties: { approver: { login: 'maria.lopez@corp.example', term: 0 } },
      });
    // Seen again by the next pass: nothing more to record.
    const again = await pollOnce(
      { store, service, logger: quiet },
      options,
      new Date(now.getTime() + 60_000),
    );
    expect(again.changed).toBe(0);
  });

  it('keeps claiming while approvals are due, so one pass checks them all', async () => {
    const now = new Date();
    await open(50, now);
    const counts = await pollOnce(
      { store, service, logger: quiet },
      { ...options, concurrency: 2 },
      now,
    );
    expect(counts.checked).toBe(50);
    // Checked once each: fresh approvals are due again at once, but not within the same pass.
    expect(sim.requestCounts()['approval-status']).toBe(50);
  });

  it('claims no more once its budget is spent, starts no check its claim may not outlast, and leaves the rest due', async () => {
    const now = new Date();
    await open(20, now);
    sim.setFaults('approval-status', { latencyMs: 60 });
    const counts = await pollOnce(
      { store, service, logger: quiet },
      { ...options, concurrency: 1, passBudgetMs: 100 },
      now,
    );
    // One claim of 8; only the checks that started within the budget ran (a claim's lease covers
    // the budget and one check), the others were given back unchecked.
    expect(counts.checked).toBeGreaterThanOrEqual(1);
    expect(counts.checked).toBeLessThan(8);
    expect(counts.checked + counts.deferred).toBe(8);
    const next = await pollOnce({ store, service, logger: quiet }, options, now);
    expect(next.checked).toBe(20 - counts.checked);
  });

  it('checks once more before giving up, so a decision made at the last moment is announced', async () => {
    const now = new Date();
    const old = new Date(now.getTime() - 30 * DAY - 1);
    const [decided = '', undecided = ''] = await open(2, old);
    sim.decide(decided, 'agree');
    const counts = await pollOnce({ store, service, logger: quiet }, options, now);
    expect(counts).toMatchObject({ changed: 1, gaveUp: 1 });
    expect((await store.getApproval(decided))?.outcome.decision).toBe('approved');
    expect((await store.getApproval(undecided))?.outcome.tracking).toBe('gave-up');
    const ids = (await store.pendingAnnouncements(100)).map((a) => a.id);
    expect(ids).toContain(`${decided}:decision:approved`);
    expect(ids).not.toContain(`${decided}:gave-up`);
    expect(ids).toContain(`${undecided}:gave-up`);
  });

  it('finishes an approval the service closed without a decision, with its own announcement', async () => {
    const now = new Date();
    const [closed = '', open1 = ''] = await open(2, now);
    // The interface allows `isend` 1 with 待办 (the real service never sends it): the client reads it
    // as ended and undecided, which is what this port answers.
    const closing: typeof service = {
      ...service,
      getStatus: async (djbh) =>
        djbh === closed
          ? { ended: true, decision: 'pending', unknown: false }
          : service.getStatus(djbh),
    };
    const counts = await pollOnce({ store, service: closing, logger: quiet }, options, now);
    expect(counts).toMatchObject({ finished: 1, checked: 2 });
    expect((await store.getApproval(closed))?.outcome.tracking).toBe('finished');
    expect((await store.getApproval(open1))?.outcome.tracking).toBe('active');
    const ids = (await store.pendingAnnouncements(100)).map((a) => a.id);
    expect(ids).toContain(`${closed}:ended`);
    expect(ids).toContain(`${closed}:parent-update:ended`);
    // Finished: the next pass no longer asks about it.
    const before = sim.requestCounts()['approval-status'];
    await pollOnce({ store, service, logger: quiet }, options, new Date(now.getTime() + 60_000));
    expect(sim.requestCounts()['approval-status'] - before).toBe(1);
  });

  it('stops following an approval the service has not known for a day, and says so once', async () => {
    const now = new Date();
    await store.createApproval(
      {
        djbh: 'ZZZZZZZZZZZz',
        teamId: 'T',
        slack: { channelId: 'C1' },
        parties: {
          requester: { slackId: 'U1', login: 'sam.taylor@corp.example' },
          approver: { login: 'maria.lopez@corp.example', slackId: 'U2' },
        },
        request: { title: 'gone', note: 'n', locale: 'en-US', createdAt: now },
      },
      now,
    );
    const at = (ms: number) => new Date(now.getTime() + ms);
    await pollOnce({ store, service, logger: quiet }, options, now);
    expect((await store.getApproval('ZZZZZZZZZZZz'))?.outcome.unknownSince).toEqual(now);
    await pollOnce({ store, service, logger: quiet }, options, at(DAY - 60_000));
    expect((await store.getApproval('ZZZZZZZZZZZz'))?.outcome.tracking).toBe('active');
    const counts = await pollOnce({ store, service, logger: quiet }, options, at(DAY + 3_600_000));
    expect(counts.finished).toBe(1);
    expect((await store.getApproval('ZZZZZZZZZZZz'))?.outcome.tracking).toBe('finished');
    const ids = (await store.pendingAnnouncements(100)).map((a) => a.id);
    expect(ids.filter((id) => id === 'ZZZZZZZZZZZz:vanished')).toHaveLength(1);
  });

  it('releases the claims of a pass that died within its lease, measured in seconds on the database clock', async () => {
    const now = new Date();
    await open(3, now);
    // A pass claims, then its process dies before recording anything.
    expect(await store.claimDue(now, 10, 300)).toHaveLength(3);
    expect(await store.claimDue(now, 10, 300)).toHaveLength(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(await store.claimDue(now, 10, 300)).toHaveLength(3);
  });

  describe('escalation', () => {
    const MINUTE = 60_000;
    const escalating = {
      ...options,
      escalation: { afterReminders: 2, answerWithinMs: MINUTE },
    };
    const LEADER = { login: 'chen.hao@corp.example', chatId: 'U0CHEN' };

    /** Records reminders 1 and 2 at `at`; delivers them to the approver when `deliver`. */
    async function remind(djbh: string, at: Date, deliver: boolean) {
      for (const n of [1, 2]) {
        await store.recordReminder(djbh, n, at);
        if (!deliver) continue;
        const dm = (await store.pendingAnnouncements(100)).find(
          (a) => a.id === `${djbh}:reminder:${n}`,
        );
        const claim = dm && (await store.claimAnnouncement(dm, at, 30_000));
        if (!claim) throw new Error(`could not claim reminder ${n}`);
        await store.markAnnouncementSent(claim, { channel: 'D2', ts: `1.${n}` }, at);
      }
    }

    it('looks up nobody while the store would refuse the escalation (its reminders never reached the approver)', async () => {
      const t0 = new Date(Date.now() - 10 * MINUTE);
      const [djbh = ''] = await open(1, t0);
      await remind(djbh, t0, false);
      let lookups = 0;
      const escalationTarget = async () => {
        lookups++;
        return LEADER;
      };
      const deps = { store, service, logger: quiet, escalationTarget };
      for (const minutes of [3, 4, 5]) {
        const counts = await pollOnce(deps, escalating, new Date(t0.getTime() + minutes * MINUTE));
        expect(counts).toMatchObject({ checked: 1, escalated: 0 });
      }
      // Due by what was recorded at every check, but the chain was never walked.
      expect(lookups).toBe(0);
    });

    it('gives up the lookups before the claim runs out, records nothing, and escalates at a later check', async () => {
      const t0 = new Date(Date.now() - 10 * MINUTE);
      const [djbh = ''] = await open(1, t0);
      await remind(djbh, t0, true);
      let aborted: unknown;
      const hanging = (_approval: unknown, signal?: AbortSignal) =>
        new Promise<typeof LEADER>((resolve) => {
          signal?.addEventListener('abort', () => {
            aborted = signal.reason;
          });
          setTimeout(() => resolve(LEADER), 10_000).unref();
        });
      // A claim of 1.6 s: the lookups get what is left of it once recording is set aside.
      const short = { ...escalating, passBudgetMs: 500, leaseMs: 1600 };
      const started = performance.now();
      const counts = await pollOnce(
        { store, service, logger: quiet, escalationTarget: hanging },
        short,
        new Date(t0.getTime() + 3 * MINUTE),
      );
      expect(performance.now() - started).toBeLessThan(1600);
      expect(counts).toMatchObject({ checked: 1, escalated: 0 });
      expect(String(aborted)).toContain('Escalation lookups timed out');
      expect((await store.getApproval(djbh))?.followUp.escalatedAt).toBeNull();

      const again = await pollOnce(
        { store, service, logger: quiet, escalationTarget: async () => LEADER },
        short,
        new Date(t0.getTime() + 4 * MINUTE),
      );
      expect(again.escalated).toBe(1);
      expect((await store.getApproval(djbh))?.followUp.escalatedTo).toEqual(LEADER);
    });

    it('abandons the lookups at a stop and records the check without the escalation', async () => {
      const t0 = new Date(Date.now() - 10 * MINUTE);
      const [djbh = ''] = await open(1, t0);
      await remind(djbh, t0, true);
      const stop = new AbortController();
      let aborted: unknown;
      const hanging = (_approval: unknown, signal?: AbortSignal) =>
        new Promise<typeof LEADER>((resolve) => {
          signal?.addEventListener('abort', () => {
            aborted = signal.reason;
          });
          // The stop comes while the chain is being walked.
          stop.abort();
          setTimeout(() => resolve(LEADER), 10_000).unref();
        });
      const started = performance.now();
      const counts = await pollOnce(
        { store, service, logger: quiet, escalationTarget: hanging },
        escalating,
        new Date(t0.getTime() + 3 * MINUTE),
        stop.signal,
      );
      // Not the lookups' 20 s: the stop ended them.
      expect(performance.now() - started).toBeLessThan(2000);
      expect(counts).toMatchObject({ checked: 1, escalated: 0 });
      expect(String(aborted)).toContain('the app is stopping');
      const recorded = await store.getApproval(djbh);
      expect(recorded?.followUp.escalatedAt).toBeNull();
      expect((await scheduleOf(db.db, djbh))?.lastCheckedAt).toEqual(
        new Date(t0.getTime() + 3 * MINUTE),
      );
    });
  });

  it('claims nothing once stopped, and gives back at once what it claimed but had not started', async () => {
    const now = new Date();
    await open(12, now);
    sim.setFaults('approval-status', { latencyMs: 200 });
    const stop = new AbortController();
    const pass = pollOnce({ store, service, logger: quiet }, options, now, stop.signal);
    await new Promise((r) => setTimeout(r, 50));
    stop.abort();
    const counts = await pass;
    // The three checks under way finished; the other nine claimed are due again, unheld.
    expect(counts).toMatchObject({ checked: 3, deferred: 9 });
    expect(sim.requestCounts()['approval-status']).toBe(3);
    const again = await pollOnce({ store, service, logger: quiet }, options, now);
    expect(again.checked).toBe(9);
  });
});
