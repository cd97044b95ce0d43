import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startWebApiServer } from '../../src/sandbox/web-api-server.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createSimulator } from '../../src/simulator/simulator.ts';
import { freePort } from '../helpers/app-process.ts';
import { started } from '../helpers/commands.ts';
import {
  composeEnv,
  envFileVariables,
  filledEnvExample,
  imageEnv,
} from '../helpers/deploy-files.ts';
import { waitFor } from '../helpers/harness.ts';

// `cp .env.example .env` is safe wherever .env is read: as compose's env_file, with
// `docker run --env-file`, and by `npm start`. A copy that set ADMIN_HOST= (empty) used to override
// the image's ADMIN_HOST=0.0.0.0, so the admin listener bound 127.0.0.1 inside the container and
// neither the published port nor Prometheus could reach it.

const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
const slack = {
  SLACK_BOT_TOKEN: 'xoxb-1-filled-in',
  SLACK_SIGNING_SECRET: 'filled-in-secret',
  APPROVAL_BASE_URL: 'https://approvals.example.com',
  APPROVAL_APP_NAME: 'slack-approvals',
  APPROVAL_APP_KEY: 'filled-in-key',
};

describe('a copy of .env.example', { timeout: 240_000 }, () => {
  it('sets nothing the container image sets, not even as empty', () => {
    const image = Object.keys(imageEnv());
    expect(image).toEqual(expect.arrayContaining(['ADMIN_PORT', 'ADMIN_HOST', 'DATABASE_URL']));
    const set = Object.keys(envFileVariables(example));
    expect(set.filter((name) => image.includes(name))).toEqual([]);
  });

  it('leaves the image’s admin listener on every interface, as compose’s env_file and with docker run --env-file', () => {
    const filled = filledEnvExample(slack);
    const compose = loadConfig(composeEnv('app-1', filled));
    expect(compose.admin).toEqual({ port: 9091, host: '0.0.0.0' });
    expect(compose.databaseUrl).toMatch(/^postgres:\/\//);
    const dockerRun = loadConfig({ ...imageEnv(), ...envFileVariables(filled) });
    expect(dockerRun.admin).toEqual({ port: 9091, host: '0.0.0.0' });
    expect(dockerRun.databaseUrl).toBe('/app/data/approvals.db');
  });

  it('runs the sandbox on its defaults for npm start', () => {
    expect(loadConfig(envFileVariables(example))).toEqual(loadConfig({}));
  });

  it('lets a second process reach the admin listener of the compose setup on another address than 127.0.0.1', async () => {
    const sim = await createSimulator({ port: 0 });
    const workspace = new Workspace({
      people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
    });
    const api = await startWebApiServer(workspace);
    const dir = mkdtempSync(join(tmpdir(), 'env-file-'));
    const env = composeEnv(
      'app-1',
      filledEnvExample({
        ...slack,
        SLACK_BOT_TOKEN: workspace.botToken,
        APPROVAL_BASE_URL: sim.url,
        APPROVAL_APP_KEY: 'sandbox-app-key',
      }),
    );
    const adminPort = await freePort();
    // What this machine cannot be: compose's Postgres host (a SQLite file stands in) and its fixed
    // ports (free ones, so test files running at once do not collide). Where it listens is as composed.
    const app = started(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...env,
        PATH: process.env.PATH ?? '',
        SLACK_API_URL: api.apiUrl,
        DATABASE_URL: join(dir, 'approvals.db'),
        PORT: String(await freePort()),
        ADMIN_PORT: String(adminPort),
      },
    });
    try {
      expect(env.ADMIN_HOST).toBe('0.0.0.0');
      await waitFor(() => app.output().includes('slack-approvals is serving'), 120_000, 'start');
      // 127.0.0.2 is this machine too, but a listener bound to 127.0.0.1 alone refuses it: an
      // answer there means the listener is on every interface, as a container's must be.
      const metrics = await fetch(`http://127.0.0.2:${adminPort}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('slack_approvals_');
    } finally {
      await app.stop();
      await api.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
