import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startWebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { freePort } from './helpers/app-process.ts';
import { startHarness, waitFor } from './helpers/harness.ts';

// `npm start` (src/main.ts) in each of its modes, as its own process.

const root = new URL('..', import.meta.url).pathname;

function run(
  env: Record<string, string>,
  entry = 'src/main.ts',
  args: string[] = [],
  cwd = new URL('..', import.meta.url).pathname,
) {
  // tsx by file URL, so a working directory outside the project (for .env) still finds it.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const child = spawn(process.execPath, ['--import', tsx, join(root, entry), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe('npm start', { timeout: 240_000 }, () => {
  it('stops with a message naming what is missing when only some Slack settings are given', async () => {
    const started = run({ SLACK_BOT_TOKEN: 'xoxb-1-abc' });
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain('SLACK_SIGNING_SECRET: required in HTTP mode');
    expect(started.output()).toContain('APPROVAL_BASE_URL: required when connecting to Slack');
    expect(started.output()).not.toContain('xoxb-1-abc');
  });

  it('runs the sandbox on embedded defaults and prints the one URL to open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'main-'));
    const port = await freePort();
    const started = run({ PORT: String(port), SANDBOX_DATA_DIR: dir }, 'src/main.ts', [
      '--sandbox',
    ]);
    try {
      await waitFor(
        () => started.output().includes('slack-approvals sandbox: open'),
        120_000,
        'the sandbox line',
      );
      expect(started.output()).toContain(`open http://127.0.0.1:${port} and type /approve`);
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    } finally {
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says which port is taken, and how to choose another', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    const dir = mkdtempSync(join(tmpdir(), 'main-'));
    try {
      const started = run({
        PORT: String(port),
        APP_MODE: 'sandbox',
        SANDBOX_DATA_DIR: dir,
      });
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain(`Port ${port} is already in use. Set PORT to a free one`);
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names ADMIN_PORT when the admin port is the one already in use', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    const h = await startHarness();
    try {
      const started = run({
        ...h.env,
        DATABASE_URL: `${h.env.DATABASE_URL}.child`,
        PORT: String(await freePort()),
        ADMIN_PORT: String(port),
      });
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain(
        `Port ${port} is already in use. Set ADMIN_PORT to a free one`,
      );
    } finally {
      blocker.close();
      await h.close();
    }
  }, 240_000);

  it('tells an unreachable Slack apart from a refused token, and starts no sandbox', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'main-'));
    const slack = {
      SLACK_BOT_TOKEN: 'xoxb-1-abc',
      SLACK_SIGNING_SECRET: 's',
      APPROVAL_BASE_URL: 'http://127.0.0.1:9',
      APPROVAL_APP_NAME: 'n',
      APPROVAL_APP_KEY: 'k',
      DATABASE_URL: join(dir, 'a.db'),
    };
    const workspace = new Workspace({ people: [] });
    const api = await startWebApiServer(workspace);
    try {
      const unreachable = run({
        ...slack,
        SLACK_API_URL: `http://127.0.0.1:${await freePort()}/api/`,
      });
      expect(await unreachable.exited).toBe(1);
      expect(unreachable.output()).toContain('Could not reach Slack at');
      const refused = run({ ...slack, SLACK_API_URL: api.apiUrl });
      expect(await refused.exited).toBe(1);
      expect(refused.output()).toContain(
        'Slack did not accept SLACK_BOT_TOKEN (auth.test: invalid_auth)',
      );
      for (const output of [unreachable.output(), refused.output()]) {
        expect(output).not.toContain('sandbox');
        expect(output).not.toContain('xoxb-1-abc');
        expect(output).not.toContain('    at ');
      }
    } finally {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says in one line, without a stack, that Slack refused SLACK_APP_TOKEN in Socket Mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'main-'));
    // The stand-in accepts its own bot token and refuses any other app token in
    // apps.connections.open, as Slack does with invalid_auth.
    const workspace = new Workspace({ people: [] });
    const api = await startWebApiServer(workspace);
    try {
      const refused = run({
        SLACK_BOT_TOKEN: workspace.botToken,
        SLACK_APP_TOKEN: 'xapp-1-refused-app-token',
        SLACK_API_URL: api.apiUrl,
        APPROVAL_BASE_URL: 'http://127.0.0.1:9',
        APPROVAL_APP_NAME: 'n',
        APPROVAL_APP_KEY: 'k',
        DATABASE_URL: join(dir, 'a.db'),
        PORT: '0',
      });
      expect(await refused.exited).toBe(1);
      const output = refused.output();
      expect(output).toContain(
        'Slack did not accept SLACK_APP_TOKEN (apps.connections.open: invalid_auth)',
      );
      expect(output).not.toContain('    at ');
      expect(output).not.toContain('could not start');
      expect(output).not.toContain('refused-app-token');
      expect(output).not.toContain(workspace.botToken);
    } finally {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to run the sandbox when a deployment setting is there but the Slack ones are not, and its hint, followed, starts the sandbox', async () => {
    const started = run({ DATABASE_URL: 'postgres://db.internal/approvals' });
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain('DATABASE_URL is set, so this is not the sandbox');
    // It used to suggest `npm start -- --sandbox`, which the sandbox then refused.
    expect(started.output()).toContain('unset DATABASE_URL and run `npm start`');
    const dir = mkdtempSync(join(tmpdir(), 'main-hint-'));
    const followed = run({ PORT: '0', SANDBOX_DATA_DIR: dir });
    try {
      await waitFor(() => followed.output().includes('slack-approvals sandbox: open'), 120_000);
    } finally {
      followed.child.kill('SIGTERM');
      await followed.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('refuses the sandbox, asked for in either way, with a deployment setting, naming it in one line', async () => {
    const cases: Array<{ env: Record<string, string>; args: string[] }> = [
      { env: { APP_MODE: 'sandbox', DATABASE_URL: 'postgres://db.internal/approvals' }, args: [] },
      { env: { APPROVAL_BASE_URL: 'https://approvals.corp.example' }, args: ['--sandbox'] },
    ];
    for (const { env, args } of cases) {
      const started = run({ PORT: '0', ...env }, 'src/main.ts', args);
      expect(await started.exited).toBe(1);
      const named = Object.keys(env).find((k) => k !== 'APP_MODE');
      expect(started.output()).toContain(
        `${named}: the sandbox refuses to start with ${named} set`,
      );
      expect(started.output()).not.toContain('slack-approvals sandbox: open');
      expect(started.output()).not.toContain('    at ');
    }
  });

  it('says in one line, without a stack, when the database cannot be opened', async () => {
    for (const dir of ['/proc/nope', '/etc/passwd']) {
      const started = run({ APP_MODE: 'sandbox', PORT: '0', SANDBOX_DATA_DIR: dir });
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain(`Could not open the database at ${dir}/sandbox.db`);
      expect(started.output()).not.toContain('    at ');
    }
  });

  it('reads .env from the working directory, the real environment winning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'main-env-'));
    const [filePort, envPort] = [await freePort(), await freePort()];
    writeFileSync(
      join(dir, '.env'),
      `APP_MODE=sandbox\nPORT=${filePort}\nSANDBOX_DATA_DIR=${join(dir, 'a')}\n`,
    );
    const fromFile = run({}, 'src/main.ts', [], dir);
    const overridden = run(
      { PORT: String(envPort), SANDBOX_DATA_DIR: join(dir, 'b') },
      'src/main.ts',
      [],
      dir,
    );
    try {
      await waitFor(
        () => fromFile.output().includes(`open http://127.0.0.1:${filePort}`),
        120_000,
        'the file port',
      );
      await waitFor(
        () => overridden.output().includes(`open http://127.0.0.1:${envPort}`),
        120_000,
        'the env port',
      );
    } finally {
      fromFile.child.kill('SIGTERM');
      overridden.child.kill('SIGTERM');
      await Promise.all([fromFile.exited, overridden.exited]);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('stops when the approval service refuses the app credentials, naming the settings', async () => {
    const h = await startHarness();
    try {
      const started = run({
        ...h.env,
        // A database of its own: the harness's app owns its SQLite file.
        DATABASE_URL: `${h.env.DATABASE_URL}.child`,
        PORT: String(await freePort()),
        APPROVAL_APP_KEY: 'wrong-key',
      });
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain('APPROVAL_APP_NAME / APPROVAL_APP_KEY (key err)');
      expect(started.output()).not.toContain('wrong-key');
    } finally {
      await h.close();
    }
  });

  it('starts when the approval service is unreachable, and is alive and ready: the service is not readiness', async () => {
    const h = await startHarness();
    const port = await freePort();
    const started = run({
      ...h.env,
      DATABASE_URL: `${h.env.DATABASE_URL}.child`,
      PORT: String(port),
      APPROVAL_BASE_URL: `http://127.0.0.1:${await freePort()}`,
    });
    try {
      await waitFor(
        () => started.output().includes('slack-approvals is serving'),
        120_000,
        'serving',
      );
      expect(started.output()).toContain('the approval service did not answer');
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      // Forms (saying the service is down), Home, help and the outbox still work: taking every
      // replica out of the load balancer would leave Slack with no answer at all.
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        ok: true,
        approvalService: 'no answer with accepted credentials in the last minute',
      });
    } finally {
      started.child.kill('SIGTERM');
      await started.exited;
      await h.close();
    }
  });
});

describe('npm run simulator', { timeout: 240_000 }, () => {
  it('serves the approval service and its admin routes on SIMULATOR_PORT with the given credentials', async () => {
    const port = await freePort();
    const started = run(
      { SIMULATOR_PORT: String(port), APPROVAL_APP_NAME: 'cli', APPROVAL_APP_KEY: 'cli-key' },
      'src/simulator/cli.ts',
    );
    try {
      await waitFor(
        () => started.output().includes('Approval-service simulator on'),
        120_000,
        'the simulator line',
      );
      const directory = await fetch(`http://127.0.0.1:${port}/simulator/api/directory`).then(
        (r) => r.json() as Promise<{ people: unknown[] }>,
      );
      expect(directory.people.length).toBeGreaterThanOrEqual(10);
      const department = await fetch(
        `http://127.0.0.1:${port}/api/connector/to3part/v1/user/department?email=sam.taylor@corp.example`,
        {
          headers: { appname: 'cli', appkey: 'cli-key' },
        },
      ).then((r) => r.json() as Promise<{ stat: boolean }>);
      expect(department.stat).toBe(true);
    } finally {
      started.child.kill('SIGTERM');
      await started.exited;
    }
  });
});
