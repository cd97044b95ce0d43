import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApprovalServiceClient } from '../src/approval-service/approval-service-client.ts';
import type { NewTrackedApproval } from '../src/approvals/tracked-approval.ts';
import { createApprovalStores } from '../src/store/approval-stores.ts';
import { openDatabase } from '../src/store/database.ts';
import { sampleApproval } from '../test/helpers/outbox-seed.ts';
import { analyzeScratchDatabase, emptyScratchDatabase } from './scratch-database.ts';
import { rows, verdict } from './table.ts';

export interface SweepResult {
  tookMs: number;
  checked: number;
  /** The app's own CPU (user + system) per check during the pass, µs. */
  cpuUsPerCheck: number;
  /** The process's peak resident set during the pass, MB. */
  peakRssMb: number;
  /** The process's first pass after its start, over the same approvals: cold code, new connections. */
  first: { tookMs: number; checked: number; cpuUsPerCheck: number };
}

/**
 * One poll pass over `count` due approvals against the simulator answering after `latencyMs`,
 * with `concurrency` checks in flight, on SQLite (a fresh file) or on `databaseUrl` (Postgres: a
 * scratch database, emptied). The floor is N·L/c (every check waits on the service). The pass
 * runs compiled, in a process of its own (bench/sweep-pass.mjs: build first), so CPU and memory
 * are the app's. That process sweeps the approvals at two ticks: the first after its start
 * (reported apart), then the next, measured, as every later tick of a running app is. With
 * `profileTo`, a CPU profile of the measured pass alone is written there.
 */
export async function sweep(
  count: number,
  {
    latencyMs,
    concurrency,
    databaseUrl,
    profileTo,
    replicas = 1,
  }: {
    latencyMs: number;
    concurrency: number;
    databaseUrl?: string;
    profileTo?: string;
    /** Passes run at once, each in its own process, on one Postgres (as replicas would). */
    replicas?: number;
  },
): Promise<SweepResult> {
  // The service runs elsewhere in production: the simulator gets a process (and core) of its own.
  const sim = await simulatorProcess();
  const dir = mkdtempSync(join(tmpdir(), 'bench-sweep-'));
  const db = await openDatabase(databaseUrl ?? join(dir, 'sweep.db'));
  if (databaseUrl) await emptyScratchDatabase(db);
  const store = createApprovalStores(db.db, db.dialect);
  const now = new Date();
  // Approvals the simulator knows, pending with their approver, as a real sweep finds them: each
  // check reads a whole answer (its entries, the approver) and decides on it. Young, so each is
  // due again at the next tick (check-schedule.ts): the pass process sweeps them at two ticks a
  // second apart, as a running app sweeps the same open approvals tick after tick.
  const due = await startInSimulator(sim.url, count);
  for (const djbh of due) await store.createApproval(sweepApproval(djbh, now), now);
  await analyzeScratchDatabase(db);
  await fetch(`${sim.url}/simulator/api/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: 'approval-status', latencyMs }),
  });
  const dbUrl = databaseUrl ?? db.location;
  // The pass runs as the app would, in a process of its own (SQLite: one process owns the file).
  await db.close();
  // Whole seconds, as the schedule's ticks are (poll-schedule.ts), the same for every replica.
  const firstTick = Math.ceil(Date.now() / 1000) * 1000;
  const ticks = [String(firstTick), String(firstTick + 1000)];
  const processes = Array.from({ length: replicas }, () =>
    passProcess([dbUrl, sim.url, String(concurrency), ...ticks, profileTo ?? '']),
  );
  // The replicas' measured passes start together, once every one has swept the first tick.
  await Promise.all(processes.map((p) => p.warm));
  for (const p of processes) p.go();
  const passes = await Promise.all(processes.map((p) => p.result));
  sim.close();
  rmSync(dir, { recursive: true, force: true });
  const checked = passes.reduce((sum, p) => sum + p.checked, 0);
  return {
    tookMs: Math.max(...passes.map((p) => p.tookMs)),
    checked,
    cpuUsPerCheck:
      passes.reduce((sum, p) => sum + p.cpuUsPerCheck * p.checked, 0) / Math.max(1, checked),
    peakRssMb: Math.max(...passes.map((p) => p.peakRssMb)),
    first: {
      tookMs: Math.max(...passes.map((p) => p.first.tookMs)),
      checked: passes.reduce((sum, p) => sum + p.first.checked, 0),
      cpuUsPerCheck:
        passes.reduce((sum, p) => sum + p.first.cpuUsPerCheck * p.first.checked, 0) /
        Math.max(
          1,
          passes.reduce((sum, p) => sum + p.first.checked, 0),
        ),
    },
  };
}

/** Node's flags as `npm start` gives them to the app (package.json's start script). */
export const APP_NODE_FLAGS: string[] =
  (
    JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
  ).scripts.start.match(/--[\w-]+=\S+/g) ?? [];

/**
 * `bench/sweep-pass.mjs` on the compiled app, with the app's Node flags: `warm` once its first
 * pass is done, `go()` to start the measured one, `result` its last line of JSON.
 */
function passProcess(args: string[]): {
  warm: Promise<void>;
  go(): void;
  result: Promise<SweepResult>;
} {
  const child = spawn(
    process.execPath,
    [...APP_NODE_FLAGS, 'bench/sweep-pass.mjs', ...args.filter(Boolean)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  let onWarm: () => void = () => {};
  const warm = new Promise<void>((resolve) => {
    onWarm = resolve;
  });
  child.stdout.on('data', (chunk) => {
    out += chunk;
    if (out.includes('"warm":true')) onWarm();
  });
  const result = new Promise<SweepResult>((resolve, reject) => {
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the sweep's pass exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as SweepResult);
    });
  });
  return {
    warm: Promise.race([warm, result.then(() => {})]),
    go: () => child.stdin.end('go\n'),
    result,
  };
}

/** The sweep's rows: time against N·L/c, CPU per check and peak memory against their targets. */
export async function sweepBench(
  count: number,
  options: { latencyMs: number; concurrency: number; databaseUrl?: string },
  targets: { ratio: number; cpuUs: number; rssMb: number },
): Promise<SweepResult> {
  const result = await sweep(count, options);
  const floorMs = (count * options.latencyMs) / options.concurrency;
  const name = options.databaseUrl ? 'Postgres' : 'SQLite';
  const all = result.checked === count ? '' : '; NOT ALL CHECKED';
  rows.push({
    case: `sweep ${name}: ${count} due, ${options.latencyMs} ms upstream, c=${options.concurrency}`,
    n: result.checked,
    'ms total': result.tookMs.toFixed(0),
    target: `${verdict(result.tookMs / floorMs, targets.ratio)} × N·L/c (${floorMs.toFixed(0)} ms)${all}`,
  });
  rows.push({
    case: `sweep ${name}: app CPU per check`,
    n: result.checked,
    'µs each': result.cpuUsPerCheck.toFixed(0),
    target: `${verdict(result.cpuUsPerCheck, targets.cpuUs)} µs`,
  });
  rows.push({
    case: `sweep ${name}: app CPU per check, the first pass after a start`,
    n: result.first.checked,
    'µs each': result.first.cpuUsPerCheck.toFixed(0),
    target: 'no target: cold code, once per start',
  });
  rows.push({
    case: `sweep ${name}: peak RSS`,
    n: result.checked,
    target: `${result.peakRssMb.toFixed(0)} MB: ${verdict(result.peakRssMb, targets.rssMb)} MB`,
  });
  return result;
}

/**
 * Whether a sweep is linear in N (the time per approval at `small` within `tolerance` of that at
 * `large`, given as the larger run's result), and, on Postgres, whether two replicas sweep `large`
 * approvals `atLeast` times faster than one, every approval checked exactly once between them.
 */
export async function scalingBench(
  large: { count: number; result: SweepResult },
  small: number,
  options: { latencyMs: number; concurrency: number; databaseUrl?: string },
  targets: { tolerance: number; replicasAtLeast: number },
): Promise<void> {
  const name = options.databaseUrl ? 'Postgres' : 'SQLite';
  const few = await sweep(small, options);
  const perLarge = large.result.tookMs / large.count;
  const perSmall = few.tookMs / small;
  rows.push({
    case: `sweep ${name}: linear in N (${small} vs ${large.count}, time per approval)`,
    n: few.checked,
    'µs each': `${(perSmall * 1000).toFixed(0)} vs ${(perLarge * 1000).toFixed(0)}`,
    target: `${verdict(Math.abs(perSmall / perLarge - 1), targets.tolerance)} apart`,
  });
  if (!options.databaseUrl) return;
  const two = await sweep(large.count, { ...options, replicas: 2 });
  const speedup = large.result.tookMs / two.tookMs;
  rows.push({
    case: `sweep Postgres: two replicas vs one, ${large.count} due`,
    n: two.checked,
    'ms total': two.tookMs.toFixed(0),
    target: `${speedup.toFixed(2)}× faster: ${verdict(speedup, targets.replicasAtLeast, true)}${two.checked === large.count ? '' : `; ${two.checked} checks, NOT EXACTLY ONCE`}`,
  });
}

const REQUESTER = 'zhou.lan@corp.example';
const APPROVER = 'chen.hao@corp.example';

/** `count` approvals started in the simulator through the app's client, 16 at a time: their numbers. */
async function startInSimulator(url: string, count: number): Promise<string[]> {
  const service = createApprovalServiceClient({
    baseUrl: url,
    appName: 'slack-approvals',
    appKey: 'sandbox-app-key',
  });
  const numbers: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let at = next++; at < count; at = next++) {
        const started = await service.startApproval({
          requester: REQUESTER,
          approver: APPROVER,
          title: 'Sweep',
          note: 'One of a sweep',
        });
        numbers[at] = started.djbh;
      }
    }),
  );
  return numbers;
}

function sweepApproval(djbh: string, createdAt: Date): NewTrackedApproval {
  return sampleApproval(djbh, {
    request: { title: 'Sweep', createdAt: createdAt },
    parties: { requester: { login: REQUESTER }, approver: { login: APPROVER } },
  });
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
