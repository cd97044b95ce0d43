import { exec as execCallback } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SlackRequester } from '../src/sandbox/slack-requests.ts';
import { startWebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { createSimulator } from '../src/simulator/simulator.ts';
import { freePort } from './helpers/app-process.ts';
import { started } from './helpers/commands.ts';
import { waitFor } from './helpers/harness.ts';
import { startSocketModeServer } from './helpers/socket-mode-server.ts';

// `slack run`: the Slack CLI runs the hooks of .slack/hooks.json, each as a shell command in the
// project's folder, and reads what they print. The CLI itself needs a Slack account, so this runs
// the hooks as it would: get-hooks, get-manifest (in each protocol get-hooks declares, and the default),
// and start with the tokens the CLI hands over, against the Socket Mode stand-in.

const root = new URL('..', import.meta.url).pathname;
const exec = promisify(execCallback);
const hooks = (
  JSON.parse(readFileSync(join(root, '.slack/hooks.json'), 'utf8')) as {
    hooks: Record<string, string>;
  }
).hooks;
const manifest = parse(readFileSync(join(root, 'manifest.yml'), 'utf8')) as unknown;
const hook = (name: string) => {
  const command = hooks[name];
  if (!command) throw new Error(`.slack/hooks.json has no ${name} hook`);
  return command;
};

describe('the Slack CLI hooks', { timeout: 240_000 }, () => {
  it('get-hooks answers the SDK’s contract: Node, an app-managed Socket Mode connection, the message-boundaries protocol', async () => {
    const { stdout } = await exec(hook('get-hooks'), { cwd: root });
    const sdk = JSON.parse(stdout) as {
      runtime: string;
      hooks: Record<string, string>;
      config: Record<string, unknown>;
    };
    expect(sdk.runtime).toBe('node');
    expect(sdk.config['sdk-managed-connection-enabled']).toBe(true);
    expect(sdk.config['protocol-version']).toContain('message-boundaries');
    // The project's own hooks take precedence over these: the manifest is YAML, the start maps tokens.
    expect(Object.keys(sdk.hooks)).toEqual(expect.arrayContaining(['get-manifest', 'start']));
    expect(hook('get-manifest')).toContain('scripts/slack-cli-manifest.mjs');
    expect(hook('start')).toContain('scripts/slack-cli-start.mjs');
  });

  it('get-manifest prints manifest.yml as JSON in each protocol get-hooks declares, as the CLI negotiates it', async () => {
    const sdk = JSON.parse((await exec(hook('get-hooks'), { cwd: root })).stdout) as {
      config: { 'protocol-version': string[] };
    };
    // The CLI picks a protocol both sides know, and falls back to the default one.
    for (const protocol of [...sdk.config['protocol-version'], 'default']) {
      if (protocol === 'default') {
        const plain = await exec(hook('get-manifest'), { cwd: root });
        expect(JSON.parse(plain.stdout)).toEqual(manifest);
        continue;
      }
      // The only other protocol the CLI knows: a fresh boundary each run, the answer between two.
      expect(protocol).toBe('message-boundaries');
      const boundary = `b${randomBytes(8).toString('hex')}`;
      const bounded = await exec(
        `${hook('get-manifest')} --protocol=${protocol} --boundary=${boundary}`,
        { cwd: root },
      );
      const between = new RegExp(`${boundary}(.*)${boundary}`, 's').exec(bounded.stdout)?.[1];
      expect(JSON.parse(between ?? 'null')).toEqual(manifest);
      // A boundary missing is the CLI's mistake, said on stderr with a failing exit.
      const unbounded = await exec(`${hook('get-manifest')} --protocol=${protocol}`, {
        cwd: root,
      }).catch((error: { code: number; stderr: string }) => error);
      expect(unbounded).toMatchObject({ code: 1 });
    }
  });

  it('uses @slack/cli-hooks through its documented commands only, never a module of its own', () => {
    const scripts = readdirSync(join(root, 'scripts')).filter((f) => /\.[cm]?[jt]s$/.test(f));
    for (const script of scripts) {
      const text = readFileSync(join(root, 'scripts', script), 'utf8');
      expect(text, script).not.toMatch(/from\s+['"]@slack\/cli-hooks/);
    }
    for (const command of Object.values(hooks))
      expect(command).toMatch(
        /^(node scripts\/[\w-]+\.mjs|npx .* -p @slack\/cli-hooks slack-cli-[\w-]+)$/,
      );
  });

  it('start runs the app over Socket Mode with the tokens the CLI hands over', async () => {
    const sim = await createSimulator({ port: 0 });
    const workspace = new Workspace({
      people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: p.locale })),
    });
    const api = await startWebApiServer(workspace);
    const socket = await startSocketModeServer(workspace);
    const dir = mkdtempSync(join(tmpdir(), 'slack-run-'));
    // Split rather than through a shell, so the SIGTERM below reaches the hook itself.
    const [command = '', ...args] = hook('start').split(' ');
    const hookRun = started(command, args, {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        // What `slack run` sets.
        SLACK_CLI_XOXB: workspace.botToken,
        SLACK_CLI_XAPP: workspace.appToken,
        // What .env would hold: the approval service, and where the data goes.
        APPROVAL_BASE_URL: sim.url,
        APPROVAL_APP_NAME: 'slack-approvals',
        APPROVAL_APP_KEY: 'sandbox-app-key',
        DATABASE_URL: join(dir, 'approvals.db'),
        PORT: String(await freePort()),
        // The stand-ins, and the sources run as they are (the compiled path has its own tests).
        SLACK_API_URL: api.apiUrl,
        SLACK_CLI_CUSTOM_FILE_PATH: 'src/main.ts',
        NODE_OPTIONS: '--import tsx',
      },
    });
    try {
      await waitFor(
        () => hookRun.output().includes('slack-approvals is serving'),
        120_000,
        'start',
      );
      await socket.connected;
      const slack = new SlackRequester({
        workspace,
        eventsUrl: 'http://127.0.0.1:9/unused',
        signingSecret: 'unused',
        responseOrigin: api.origin,
      });
      const sam = workspace.userByLogin('sam.taylor@corp.example').id;
      const general = workspace.channelByName('general').id;
      await socket.deliver('slash_commands', slack.commandPayload(sam, general, 'From slack run'));
      await waitFor(
        () =>
          [...workspace.views.values()].find((v) =>
            JSON.stringify(v.view).includes('From slack run'),
          ),
        10_000,
        'the request form',
      );
    } finally {
      await hookRun.stop();
      await socket.close();
      await api.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('start refuses to run without the CLI’s tokens, and says what to do', async () => {
    const refused = await exec(hook('start'), {
      cwd: root,
      env: { PATH: process.env.PATH ?? '' },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toContain('SLACK_CLI_XOXB');
  });
});
