import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from './helpers/app-process.ts';
import { waitFor } from './helpers/harness.ts';

// `npm start` (src/main.ts) in each of its modes, as its own process.

function run(env: Record<string, string>, entry = 'src/main.ts') {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

describe('npm start', () => {
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
    const started = run({ PORT: String(port), DATABASE_URL: join(dir, 'a.db') });
    try {
      await waitFor(
        () => started.output().includes('slack-approvals sandbox: open'),
        20_000,
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
      const started = run({ PORT: String(port), DATABASE_URL: join(dir, 'a.db') });
      expect(await started.exited).toBe(1);
      expect(started.output()).toContain(`Port ${port} is already in use. Set PORT to a free one`);
    } finally {
      blocker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('connects to Slack and starts no sandbox when all Slack settings are given', async () => {
    // No Slack is reachable here: the start fails at the token check, which shows it tried Slack
    // (and did not fall back to the sandbox).
    const dir = mkdtempSync(join(tmpdir(), 'main-'));
    const started = run({
      SLACK_BOT_TOKEN: 'xoxb-1-abc',
      SLACK_SIGNING_SECRET: 's',
      SLACK_API_URL: `http://127.0.0.1:${await freePort()}/api/`,
      APPROVAL_BASE_URL: 'http://127.0.0.1:9',
      APPROVAL_APP_NAME: 'n',
      APPROVAL_APP_KEY: 'k',
      DATABASE_URL: join(dir, 'a.db'),
    });
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain('Slack did not accept SLACK_BOT_TOKEN');
    expect(started.output()).not.toContain('sandbox');
    expect(started.output()).not.toContain('xoxb-1-abc');
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('npm run simulator', () => {
  it('serves the approval service and its admin routes on SIMULATOR_PORT with the given credentials', async () => {
    const port = await freePort();
    const started = run(
      { SIMULATOR_PORT: String(port), APPROVAL_APP_NAME: 'cli', APPROVAL_APP_KEY: 'cli-key' },
      'src/simulator/cli.ts',
    );
    try {
      await waitFor(
        () => started.output().includes('Approval-service simulator on'),
        20_000,
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
