// One poll pass as the app runs it: compiled (dist/, as `npm start` and the image run it), in a
// process of its own, so that its CPU and memory are the app's alone. `sweep-bench.ts` seeds the
// database and starts the service first.
//
// A running app sweeps the same open approvals tick after tick, for days: its code has long been
// compiled by V8's optimising tiers, its connections are open. So the process sweeps the due
// approvals at `firstAtMs` (the first tick after its start: cold code, new connections; reported
// apart), waits for a line on stdin (so that replicas start their measured passes together), and
// sweeps them again at `nowMs`, the next tick, as every later tick does. Measured on this machine,
// the optimising compiler still spent 430 ms in the pass after 1,000 checks (40 µs a check), 140 ms
// in the one after 11,000, 25 ms after 31,000 (bench/README). Prints one JSON line: both passes'
// time, checks, CPU per check, and the peak RSS; with a sixth argument, writes a CPU profile of the
// measured pass.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createInterface } from 'node:readline';
import { createObservedService, createServiceHealth } from '../dist/composition/service.js';
import { createMetrics } from '../dist/metrics.js';
import { pollOnce } from '../dist/poller/poll-once.js';
import { createApprovalStores } from '../dist/store/approval-stores.js';
import { openDatabase } from '../dist/store/database.js';
import { createMetricsSource } from '../dist/store/metrics-source.js';

const [databaseUrl, serviceUrl, concurrency, firstAtMs, nowMs, profileTo] = process.argv.slice(2);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const db = await openDatabase(databaseUrl);
const store = createApprovalStores(db.db, db.dialect);
// The client as the app composes it: each call measured (metrics) and watched (health).
const health = createServiceHealth(quiet);
const metrics = createMetrics(createMetricsSource(db.db), { serviceUp: health.up, pool: db.pool });
const service = createObservedService(
  { approval: { baseUrl: serviceUrl, appName: 'slack-approvals', appKey: 'sandbox-app-key' } },
  undefined,
  metrics,
  health,
);

/** One pass at `atMs` (one tick's `now`, the same for every replica, as the schedule gives it). */
async function pass(atMs) {
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const counts = await pollOnce(
    { store, service, logger: quiet },
    {
      concurrency: Number(concurrency),
      maxIntervalMs: 3_600_000,
      giveUpAfterMs: 30 * 86_400_000,
      passBudgetMs: 600_000,
      leaseMs: 660_000,
    },
    new Date(Number(atMs)),
  );
  const tookMs = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  return {
    tookMs,
    checked: counts.checked,
    cpuUsPerCheck: (cpu.user + cpu.system) / Math.max(1, counts.checked),
  };
}

const first = await pass(firstAtMs);
process.stdout.write(`${JSON.stringify({ warm: true })}\n`);
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once('line', resolve));
lines.close();

const session = profileTo ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
const measured = await pass(nowMs);
if (session) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(profileTo, JSON.stringify(profile));
  session.disconnect();
}
await db.close();
// The kernel's high-water mark of the process's resident set (KiB): the peak, never sampled past.
const peakRssMb = (process.resourceUsage().maxRSS * 1024) / 1e6;
process.stdout.write(`${JSON.stringify({ ...measured, first, peakRssMb })}\n`);
