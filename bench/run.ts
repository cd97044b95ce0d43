import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApprovalServiceClient } from '../src/approval-service/approval-service-client.ts';
import { pollOnce, sweepBatches } from '../src/poller/poll-once.ts';
import { createSimulator } from '../src/simulator/simulator.ts';
import { insertApproval } from '../src/store/approval-repository.ts';
import { createApprovalStores } from '../src/store/approval-stores.ts';
import { openDatabase } from '../src/store/database.ts';
import { sampleApproval } from '../test/helpers/outbox-seed.ts';

// `npm run bench`: how long the hot paths take at realistic volumes, printed as a table.
// BENCH_POSTGRES_URL adds the store on Postgres: a scratch database, whose tables are emptied. Figures are for this machine; compare runs, not machines.

import { decisionLatencyBench } from './decision-latency-bench.ts';
import { deliveryBench } from './delivery-bench.ts';
import { reportBench } from './report-bench.ts';
import { restartBench } from './restart-bench.ts';
import { analyzeScratchDatabase, emptyScratchDatabase } from './scratch-database.ts';
import { scalingBench, sweepBench } from './sweep-bench.ts';
import { quiet, rows, verdict } from './table.ts';

/** Targets: what this app needs at a few thousand open approvals on a 2-core machine. */
const TARGETS = {
  createUs: 1000, // starting an approval must not wait on the store
  claimUs: 500, // an approval's share of a pass's claim and record
  pollPassMs: 2000, // 500 open approvals checked well within a 30 s tick
  pollHeapMb: 50,
};
/** POLL_CONCURRENCY's default (config.ts): the batches a pass claims and records in. */
const POLL_CONCURRENCY = 4;

async function storeBench(name: string, url: string, count: number): Promise<void> {
  const db = await openDatabase(url);
  const empty = () => emptyScratchDatabase(db);
  const store = createApprovalStores(db.db, db.dialect);
  const t0 = new Date('2026-11-21T00:00:00Z');
  const approval = (i: number) =>
    sampleApproval(`B${String(i).padStart(10, '0')}x`, {
      parties: { approver: { slackId: 'U2' } },
      request: { title: 'Bench', note: 'x'.repeat(200), createdAt: t0 },
    });
  // What no write can go below here: one committed statement, the approval's row alone.
  await empty();
  let started = performance.now();
  for (let i = 0; i < count; i++) await insertApproval(db.db, approval(i), t0);
  const floor = performance.now() - started;
  await empty();
  started = performance.now();
  for (let i = 0; i < count; i++) await store.createApproval(approval(i), t0);
  const create = performance.now() - started;
  await analyzeScratchDatabase(db);
  // A poll pass's path (poll-once.ts), with nothing changed: claims in its batches, and unchanged
  // checks recorded in its batches. One after the other here, where a pass overlaps them.
  const batches = sweepBatches(POLL_CONCURRENCY);
  started = performance.now();
  let claimed = 0;
  for (;;) {
    const batch = await store.claimDue(new Date(t0.getTime() + 1000), batches.claim, 60_000);
    if (batch.length === 0) break;
    claimed += batch.length;
    for (let i = 0; i < batch.length; i += batches.record)
      await store.recordChecks(
        batch.slice(i, i + batches.record).map((a) => ({
          djbh: a.approval.djbh,
          claim: a.claim,
          nextCheckAt: new Date(t0.getTime() + 3_600_000),
          unknown: false,
        })),
        t0,
      );
  }
  const claim = performance.now() - started;
  rows.push({
    case: `store ${name}: create approval + 2 announcements`,
    n: count,
    'ms total': create.toFixed(0),
    'µs each': ((create * 1000) / count).toFixed(0),
    target: verdict((create * 1000) / count, TARGETS.createUs),
  });
  rows.push({
    case: `store ${name}: one committed insert (the floor)`,
    n: count,
    'ms total': floor.toFixed(0),
    'µs each': ((floor * 1000) / count).toFixed(0),
    target: '(none: what a commit costs here)',
  });
  rows.push({
    case: `store ${name}: claim ${batches.claim} + record unchanged ${batches.record} at once (a pass's batches)`,
    n: claimed,
    'ms total': claim.toFixed(0),
    'µs each': ((claim * 1000) / claimed).toFixed(0),
    target: verdict((claim * 1000) / claimed, TARGETS.claimUs),
  });
  await db.close();
}

async function pollBench(count: number): Promise<void> {
  const sim = await createSimulator({ port: 0 });
  // Issue 39's targets: a decision in the thread within seconds when the approver went from Slack
  // to decide, within minutes in working hours without a signal, for at most a tenth of 30-s polling.
  decisionLatencyBench(
    5000,
    { clickedP95Ms: 15_000, clickedMaxMs: 30_000, quietP95Ms: 5 * 60_000 },
    { weekShare: 0.1, giveUpShare: 0.05 },
  );
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const db = await openDatabase(join(dir, 'poll.db'));
  const store = createApprovalStores(db.db, db.dialect);
  const service = createApprovalServiceClient({
    baseUrl: sim.url,
    appName: 'slack-approvals',
    appKey: 'sandbox-app-key',
  });
  const now = new Date();
  for (let i = 0; i < count; i++) {
    const { djbh } = await service.startApproval({
      requester: 'a@corp.example',
      approver: 'b@corp.example',
      title: 't',
      note: 'n',
    });
    await store.createApproval(
      {
        djbh,
        teamId: 'T1',
        slack: { channelId: 'C1' },
        parties: {
          requester: { slackId: 'U1', login: 'a@corp.example' },
          approver: { login: 'b@corp.example', slackId: null },
        },
        request: { title: 't', note: 'n', locale: 'en-US', createdAt: now },
      },
      now,
    );
  }
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  const counts = await pollOnce(
    { store, service, logger: quiet },
    {
      concurrency: 4,
      maxIntervalMs: 3_600_000,
      giveUpAfterMs: 30 * 86_400_000,
      passBudgetMs: 60_000,
      leaseMs: 90_000,
    },
    now,
  );
  const took = performance.now() - started;
  const heapMb = (process.memoryUsage().heapUsed - before) / 1e6;
  rows.push({
    case: 'poll pass against the simulator (concurrency 4)',
    n: counts.checked,
    'ms total': took.toFixed(0),
    'µs each': ((took * 1000) / counts.checked).toFixed(0),
    'heap Δ MB': heapMb.toFixed(1),
    target: `${verdict(took, TARGETS.pollPassMs)} ms; heap ${verdict(heapMb, TARGETS.pollHeapMb)} MB`,
  });
  await db.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}

const dir = mkdtempSync(join(tmpdir(), 'bench-'));
await storeBench('SQLite', join(dir, 'bench.db'), 2000);
if (process.env.BENCH_POSTGRES_URL)
  await storeBench('Postgres', process.env.BENCH_POSTGRES_URL, 2000);
await pollBench(500);
rmSync(dir, { recursive: true, force: true });
// Issue 31's targets: a sweep close to N·L/c, a quarter of a millisecond of CPU per check, flat
// memory, linear in N, and a second replica that nearly halves the sweep.
const sweepAt = { latencyMs: 20, concurrency: 16 };
const scaling = { tolerance: 0.1, replicasAtLeast: 1.8 };
const onSqlite = await sweepBench(10_000, sweepAt, { ratio: 1.1, cpuUs: 250, rssMb: 160 });
await scalingBench({ count: 10_000, result: onSqlite }, 1_000, sweepAt, scaling);
if (process.env.BENCH_POSTGRES_URL) {
  const onPostgres = { ...sweepAt, databaseUrl: process.env.BENCH_POSTGRES_URL };
  const result = await sweepBench(10_000, onPostgres, { ratio: 1.1, cpuUs: 300, rssMb: 180 });
  await scalingBench({ count: 10_000, result }, 1_000, onPostgres, scaling);
} else
  rows.push({
    case: 'sweep on Postgres, two replicas',
    target: 'not run: set BENCH_POSTGRES_URL (a scratch database)',
  });
await deliveryBench(60);
// Issue 19's fleet targets: several replicas on one Postgres share one channel's pace.
const fleetUrl = process.env.BENCH_POSTGRES_URL;
if (fleetUrl) {
  await deliveryBench(60, { replicas: 2, databaseUrl: fleetUrl });
  await deliveryBench(60, { replicas: 3, databaseUrl: fleetUrl });
} else
  rows.push({
    case: 'delivery, 2 and 3 replicas on one Postgres',
    target: 'not run: set BENCH_POSTGRES_URL (a scratch database)',
  });
await restartBench(5, 1000);
// Issue 42: the auditors' export of a year of a 20,000-person company, within a minute and in
// bounded memory: the process itself is some 100 MB, the export keeps one page of 1,000 approvals
// alive (it completes with the heap capped at 48 MB), and V8 lets its heap grow lazily above that.
const reportTargets = { ms: 60_000, rssMb: 256, heapCapMb: 48 };
await reportBench(100_000, reportTargets);
if (process.env.BENCH_POSTGRES_URL)
  await reportBench(100_000, reportTargets, process.env.BENCH_POSTGRES_URL);
console.table(rows);
