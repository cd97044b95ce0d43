import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApprovalServiceClient } from '../src/approval-service/approval-service-client.ts';
import { pollOnce } from '../src/poller/poll-once.ts';
import { createApprovalStores } from '../src/store/approval-stores.ts';
import { openDatabase } from '../src/store/database.ts';
import { sampleApproval } from '../test/helpers/outbox-seed.ts';
import { quiet, rows, verdict } from './table.ts';

/**
 * One poll pass over `count` due approvals against the simulator answering after `latencyMs`,
 * with `concurrency` checks in flight. The floor is N·L/c (every check waits on the service);
 * the target is 1.3 × that: claiming and recording may cost at most 30 % on top.
 */
export async function sweepBench(
  count: number,
  { latencyMs, concurrency }: { latencyMs: number; concurrency: number },
): Promise<void> {
  // The service runs elsewhere in production: the simulator gets a process (and core) of its own.
  const sim = await simulatorProcess();
  const dir = mkdtempSync(join(tmpdir(), 'bench-sweep-'));
  const db = await openDatabase(join(dir, 'sweep.db'));
  const store = createApprovalStores(db.db, db.dialect);
  const service = createApprovalServiceClient({
    baseUrl: sim.url,
    appName: 'slack-approvals',
    appKey: 'sandbox-app-key',
  });
  const now = new Date();
  // Numbers the simulator never issued: it answers each after the same latency (data: null),
  // which is all a sweep needs, and the store holds 10,000 rows in seconds.
  for (let i = 0; i < count; i++) {
    await store.createApproval(
      sampleApproval(`S${String(i).padStart(10, '0')}x`, { title: 'Sweep', createdAt: now }),
      now,
    );
  }
  await fetch(`${sim.url}/simulator/api/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: 'approval-status', latencyMs }),
  });
  const started = performance.now();
  const counts = await pollOnce(
    { store, service, logger: quiet },
    {
      concurrency,
      maxIntervalMs: 3_600_000,
      giveUpAfterMs: 30 * 86_400_000,
      passBudgetMs: 600_000,
      leaseMs: 660_000,
    },
    now,
  );
  const tookMs = performance.now() - started;
  const floorMs = (count * latencyMs) / concurrency;
  rows.push({
    case: `poll sweep: ${count} due, ${latencyMs} ms upstream, concurrency ${concurrency}`,
    n: counts.checked,
    'ms total': tookMs.toFixed(0),
    'µs each': ((tookMs * 1000) / Math.max(1, counts.checked)).toFixed(0),
    target: `${verdict(tookMs / floorMs, 1.3)} × N·L/c (${floorMs.toFixed(0)} ms)${counts.checked === count ? '' : '; NOT ALL CHECKED'}`,
  });
  await db.close();
  sim.close();
  rmSync(dir, { recursive: true, force: true });
}

/** `npm run simulator` as a child process on a free port. */
async function simulatorProcess(): Promise<{ url: string; close(): void }> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/simulator/cli.ts'], {
    env: { ...process.env, SIMULATOR_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => child.kill() };
}
