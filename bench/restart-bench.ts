import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { createSimulator } from '../src/simulator/simulator.ts';
import { freePort } from '../test/helpers/app-process.ts';
import { SIGNING_SECRET } from '../test/helpers/harness.ts';
import { APP_NODE_FLAGS } from './sweep-bench.ts';
import { rows, verdict } from './table.ts';

const root = new URL('..', import.meta.url).pathname;

/**
 * `npm start` as a supervisor sees it: the app killed with SIGKILL and started again on the same
 * SQLite file, timed from the new process's spawn to its first 200 on /healthz. The build is
 * made once before; a restart of unchanged code compiles nothing. Target: within 1 s.
 */
export async function restartBench(rounds: number, targetMs = 1000): Promise<void> {
  execFileSync(process.execPath, ['scripts/start.mjs', '--build-only'], { cwd: root });
  const sim = await createSimulator({ port: 0 });
  const workspace = new Workspace({
    people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
  });
  const api = await startWebApiServer(workspace);
  const dir = mkdtempSync(join(tmpdir(), 'bench-restart-'));
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    SLACK_BOT_TOKEN: workspace.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: api.apiUrl,
    PORT: String(port),
    APPROVAL_BASE_URL: sim.url,
    APPROVAL_APP_NAME: 'slack-approvals',
    APPROVAL_APP_KEY: 'sandbox-app-key',
    DATABASE_URL: join(dir, 'approvals.db'),
    LOG_LEVEL: 'warn',
  };
  const start = () =>
    spawn(process.execPath, [...APP_NODE_FLAGS, 'scripts/start.mjs'], {
      cwd: root,
      env,
      stdio: 'ignore',
    });
  const healthy = async (child: ChildProcess) => {
    const started = performance.now();
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the app exited ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return performance.now() - started;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const times: number[] = [];
  let child = start();
  try {
    await healthy(child);
    for (let i = 0; i < rounds; i++) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
      child = start();
      times.push(await healthy(child));
    }
  } finally {
    child.kill('SIGKILL');
    await api.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const worst = Math.max(...times);
  rows.push({
    case: 'npm start after kill -9 → /healthz 200 (unchanged code, SQLite)',
    n: rounds,
    'ms total': times.reduce((a, b) => a + b, 0).toFixed(0),
    'µs each': ((times.reduce((a, b) => a + b, 0) * 1000) / rounds).toFixed(0),
    target: `worst ${worst.toFixed(0)} ms: ${verdict(worst, targetMs)} ms`,
  });
}
