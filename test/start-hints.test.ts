import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { freePort } from './helpers/app-process.ts';
import { started } from './helpers/commands.ts';
import { waitFor } from './helpers/harness.ts';

// Every start-up error that suggests a setting or a command, followed as written: what it
// suggests must then start (the sandbox's other hints are followed in main.test.ts). Each is
// printed once.

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'hints-'));
  dirs.push(dir);
  return dir;
};

function startSandbox(env: Record<string, string>) {
  const app = started(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  const opened = () =>
    waitFor(() => app.output().includes('slack-approvals sandbox: open'), 120_000, app.output());
  return { ...app, opened };
}

/** `NAME=value` pairs the hint suggests (the part before `npm start`). */
const suggested = (hint: string): Record<string, string> =>
  Object.fromEntries(
    [...hint.matchAll(/\b([A-Z_]+)=(\S+)(?= [A-Z_]+=| npm start)/g)].map((m) => [m[1], m[2]]),
  );

/** A port that is free, and whose next one is free too (what the hints suggest). */
async function freePair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    const next = createServer();
    const free = await new Promise<boolean>((resolve) => {
      next.once('error', () => resolve(false));
      next.listen(port + 1, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => next.close(resolve));
      return port;
    }
  }
}

describe('start-up hints, followed', { timeout: 240_000 }, () => {
  it('a second sandbox in one folder is told to take a folder and a port of its own, which then starts', async () => {
    const dir = tempDir();
    const port = await freePair();
    const first = startSandbox({ APP_MODE: 'sandbox', SANDBOX_DATA_DIR: dir, PORT: String(port) });
    try {
      await first.opened();
      const second = startSandbox({
        APP_MODE: 'sandbox',
        SANDBOX_DATA_DIR: dir,
        PORT: String(port),
      });
      expect(await second.exited).toBe(1);
      const hint = second.output();
      expect(hint.match(/Another sandbox is running/g)).toHaveLength(1);
      expect(hint).not.toContain('Postgres');
      const follow = suggested(hint);
      expect(follow).toEqual({ SANDBOX_DATA_DIR: `${dir}-2`, PORT: String(port + 1) });
      dirs.push(`${dir}-2`);
      const third = startSandbox({ APP_MODE: 'sandbox', ...follow });
      try {
        await third.opened();
      } finally {
        await third.stop();
      }
    } finally {
      await first.stop();
    }
  }, 240_000);

  it('a taken port is named with a free one to use instead, which then starts', async () => {
    const port = await freePair();
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const refused = startSandbox({ SANDBOX_DATA_DIR: tempDir(), PORT: String(port) });
      expect(await refused.exited).toBe(1);
      expect(refused.output().match(/already in use/g)).toHaveLength(1);
      const follow = suggested(refused.output());
      expect(follow).toEqual({ PORT: String(port + 1) });
      const started = startSandbox({ SANDBOX_DATA_DIR: tempDir(), ...follow });
      try {
        await started.opened();
      } finally {
        await started.stop();
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 240_000);

  it('the sandbox answers /healthz and /readyz on PORT, as its hint about the admin port says', async () => {
    const port = await freePort();
    const sandbox = startSandbox({ SANDBOX_DATA_DIR: tempDir(), PORT: String(port) });
    try {
      await sandbox.opened();
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const ready = await waitFor(async () => {
        const r = await fetch(`http://127.0.0.1:${port}/readyz`);
        return r.status === 200 && r;
      });
      expect(await ready.json()).toMatchObject({ ok: true });
    } finally {
      await sandbox.stop();
    }
  }, 240_000);

  const slackHttp = {
    SLACK_BOT_TOKEN: 'xoxb-1',
    SLACK_SIGNING_SECRET: 's',
    APPROVAL_BASE_URL: 'https://approvals.example.com',
    APPROVAL_APP_NAME: 'slack-approvals',
    APPROVAL_APP_KEY: 'k',
  };
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return error.problems;
    }
  };
  const numberIn = (problem: string) => /\((\d+)(?: ms| s)?\)/.exec(problem)?.[1] ?? 'none';

  it.each<{
    what: string;
    env: Record<string, string>;
    follow: (env: Record<string, string>, problem: string) => Record<string, string>;
    startsAs: string;
  }>([
    {
      what: 'a deployment setting without Slack: unset it and run npm start (the sandbox)',
      env: { DATABASE_URL: 'postgres://db/x', APPROVAL_BASE_URL: 'https://a.example' },
      follow: (env: Record<string, string>, problem: string) => {
        const names = /unset ([A-Z_]+(?: and [A-Z_]+)*) and run `npm start`/.exec(problem)?.[1];
        return Object.fromEntries(
          Object.entries(env).filter(([k]) => !names?.split(' and ').includes(k)),
        );
      },
      startsAs: 'sandbox',
    },
    {
      what: 'the sandbox asked for with a deployment setting: unset it',
      env: { APP_MODE: 'sandbox', DATABASE_URL: 'postgres://db/x' },
      follow: (env: Record<string, string>, problem: string) => {
        const name = /unset ([A-Z_]+) to run the sandbox/.exec(problem)?.[1] ?? 'none';
        return Object.fromEntries(Object.entries(env).filter(([k]) => k !== name));
      },
      startsAs: 'sandbox',
    },
    {
      what: 'Slack named in HTTP mode without a signing secret: set SLACK_APP_TOKEN for Socket Mode',
      env: { ...slackHttp, SLACK_SIGNING_SECRET: '' },
      follow: (env: Record<string, string>, problem: string) => {
        expect(problem).toContain('or set SLACK_APP_TOKEN for Socket Mode');
        return { ...env, SLACK_APP_TOKEN: 'xapp-1' };
      },
      startsAs: 'socket',
    },
    {
      what: 'a grace too short for a submission under way: the least it names',
      env: { ...slackHttp, SHUTDOWN_GRACE_MS: '5000' },
      follow: (env: Record<string, string>, problem: string) => ({
        ...env,
        SHUTDOWN_GRACE_MS: numberIn(problem),
      }),
      startsAs: 'http',
    },
    {
      what: 'a lease shorter than three Slack calls: the least it names',
      env: { ...slackHttp, ANNOUNCEMENT_LEASE_SECONDS: '10' },
      follow: (env: Record<string, string>, problem: string) => ({
        ...env,
        ANNOUNCEMENT_LEASE_SECONDS: numberIn(problem),
      }),
      startsAs: 'http',
    },
    {
      what: 'escalation after more reminders than are sent: the most it names',
      env: { ...slackHttp, REMINDER_MAX: '2', ESCALATE_AFTER_REMINDERS: '3' },
      follow: (env: Record<string, string>, problem: string) => ({
        ...env,
        ESCALATE_AFTER_REMINDERS: numberIn(problem),
      }),
      startsAs: 'http',
    },
  ])('$what', ({ env, follow, startsAs }) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    const followed = follow(env, problems[0] ?? '');
    expect(problemsOf(followed)).toEqual([]);
    expect(loadConfig(followed).mode).toBe(startsAs);
  });
});
