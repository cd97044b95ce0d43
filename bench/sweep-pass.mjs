// One poll pass as the app runs it: compiled (dist/, as `npm start` and the image run it), in a
// process of its own, so that its CPU and memory are the app's alone. `sweep-bench.ts` seeds the
// database and starts the service first. Prints one JSON line: time, checks, CPU per check and
// peak RSS; with a fourth argument, writes a CPU profile of the pass there.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createApprovalServiceClient } from '../dist/approval-service/approval-service-client.js';
import { pollOnce } from '../dist/poller/poll-once.js';
import { createApprovalStores } from '../dist/store/approval-stores.js';
import { openDatabase } from '../dist/store/database.js';

const [databaseUrl, serviceUrl, concurrency, nowMs, profileTo] = process.argv.slice(2);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const db = await openDatabase(databaseUrl);
const store = createApprovalStores(db.db, db.dialect);
const service = createApprovalServiceClient({
  baseUrl: serviceUrl,
  appName: 'slack-approvals',
  appKey: 'sandbox-app-key',
});
let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}, 100);
const session = profileTo ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
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
  // One tick's `now`, the same for every replica (as the schedule gives them).
  new Date(Number(nowMs)),
);
const tookMs = performance.now() - started;
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss());
if (session) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(profileTo, JSON.stringify(profile));
  session.disconnect();
}
await db.close();
process.stdout.write(
  `${JSON.stringify({
    tookMs,
    checked: counts.checked,
    cpuUsPerCheck: (cpu.user + cpu.system) / Math.max(1, counts.checked),
    peakRssMb: peakRss / 1e6,
  })}\n`,
);
