import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApprovalServiceClient } from '../../src/approval-service/approval-service-client.ts';
import { createAnnouncementDispatcher } from '../../src/approvals/announcement-dispatcher.ts';
import type { ApprovalStore } from '../../src/approvals/approval-store.ts';
import type { ApprovalService } from '../../src/approvals/approval-types.ts';
import { pollOnce } from '../../src/poller/poll-once.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { createApprovalStore } from '../../src/store/approval-store.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';

// One poll pass against the simulator over HTTP and a real SQLite store. Slack is out of the
// picture here: announcements are delivered to a recorder (the end-to-end tests cover Slack).

const quiet = { debug() {}, info() {}, warn() {} };
const options = { concurrency: 3, maxIntervalMs: 3_600_000, giveUpAfterMs: 30 * 86_400_000 };

let sim: Simulator;
let dir: string;
let db: DatabaseHandle;
let store: ApprovalStore;
let service: ApprovalService;
let delivered: string[];

beforeEach(async () => {
  sim = await createSimulator({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'poll-'));
  db = await openDatabase(join(dir, 'a.db'));
  store = createApprovalStore(db.db, db.dialect);
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

function dispatcher() {
  return createAnnouncementDispatcher({
    store,
    announcer: {
      deliver: async (a) => {
        delivered.push(a.id);
        return { channel: 'C1', ts: `1.${delivered.length}` };
      },
      findDelivered: async () => undefined,
    },
    logger: quiet,
    leaseMs: 60_000,
  });
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
        channelId: 'C1',
        requesterSlackId: 'U1',
        requesterLogin: 'sam.taylor@corp.example',
        approverLogin: 'maria.lopez@corp.example',
        approverSlackId: 'U2',
        title: `t${i}`,
        note: 'n',
        locale: 'en-US',
        createdAt: now,
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
    const counts = await pollOnce(
      { store, service, dispatcher: dispatcher(), logger: quiet },
      options,
      now,
    );
    expect(counts.checked).toBe(10);
    expect(sim.peakConcurrency()['approval-status']).toBe(3);
  });

  it('stops asking after three checks in a row find the service down, and announces nothing', async () => {
    const now = new Date();
    await open(10, now);
    const d = dispatcher();
    await d.deliverPending();
    delivered = [];
    sim.setFaults('approval-status', { outage: true });
    const before = sim.requestCounts()['approval-status'];
    const counts = await pollOnce(
      { store, service, dispatcher: d, logger: quiet },
      { ...options, concurrency: 1 },
      now,
    );
    expect(counts).toMatchObject({ failed: 3, deferred: 7, checked: 0, changed: 0 });
    expect(sim.requestCounts()['approval-status'] - before).toBe(3);
    expect(delivered).toEqual([]);
    // Deferred approvals are due again soon, not lost.
    sim.clearFaults();
    const later = await pollOnce(
      { store, service, dispatcher: d, logger: quiet },
      options,
      new Date(now.getTime() + 31_000),
    );
    expect(later.checked).toBe(10);
  });

  it('records each change once and announces it once, however many passes see it', async () => {
    const now = new Date();
    const [djbh = ''] = await open(1, now);
    const d = dispatcher();
    sim.decide(djbh, 'refuse');
    await pollOnce({ store, service, dispatcher: d, logger: quiet }, options, now);
    await pollOnce(
      { store, service, dispatcher: d, logger: quiet },
      options,
      new Date(now.getTime() + 60_000),
    );
    expect(delivered.filter((id) => id === `${djbh}:decision:rejected`)).toHaveLength(1);
    expect((await store.getApproval(djbh))?.tracking).toBe('finished');
  });
});
