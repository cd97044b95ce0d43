import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackRequester } from '../src/sandbox/slack-requests.ts';
import { startWebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { createSimulator } from '../src/simulator/simulator.ts';
import { AppProcess, freePort } from './helpers/app-process.ts';
import { SIGNING_SECRET, waitFor } from './helpers/harness.ts';

// The compiled app (`node dist/main.js`) on the Node running the tests, as production runs it:
// compiled and bundled once here (as the build does), then started, worked, stopped and killed as
// a supervisor would.

const root = new URL('..', import.meta.url).pathname;
const exec = promisify(execFile);
// Beside the project (not in /tmp), so that node finds node_modules as it does for dist/.
const out = join(root, 'test-artifacts', `dist-${process.pid}`);

beforeAll(async () => {
  await exec(process.execPath, [
    join(root, 'node_modules/typescript/bin/tsc'),
    '-p',
    join(root, 'tsconfig.build.json'),
    '--outDir',
    out,
  ]);
  await exec(process.execPath, [join(root, 'scripts/copy-assets.mjs'), out], { cwd: root });
  await exec(process.execPath, [join(root, 'scripts/bundle.mjs'), out], { cwd: root });
}, 240_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the compiled build', { timeout: 240_000 }, () => {
  it('runs on plain node and serves the sandbox, as production runs it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'main-dist-'));
    const port = await freePort();
    const child = spawn(process.execPath, [join(out, 'main.js'), '--sandbox'], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port), SANDBOX_DATA_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      await waitFor(() => output.includes('slack-approvals sandbox: open'), 120_000, 'the sandbox');
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // better-sqlite3 12 on Node 24 aborted at every exit after writes (SIGABRT, exit 134, in a
  // statement's destructor): a supervisor saw a crash at each deploy. The approval below makes the
  // app write, prepare and finalize statements before each stop.
  it(`exits 0 on SIGTERM after real work, also after kill -9 and a restart (node ${process.version})`, async () => {
    const sim = await createSimulator({ port: 0 });
    const workspace = new Workspace({
      people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
    });
    const api = await startWebApiServer(workspace);
    const dir = mkdtempSync(join(tmpdir(), 'slack-approvals-dist-'));
    const port = await freePort();
    const app = new AppProcess(
      {
        SLACK_BOT_TOKEN: workspace.botToken,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: api.apiUrl,
        PORT: String(port),
        APPROVAL_BASE_URL: sim.url,
        APPROVAL_APP_NAME: 'slack-approvals',
        APPROVAL_APP_KEY: 'sandbox-app-key',
        DATABASE_URL: join(dir, 'approvals.db'),
        STATUS_POLL_CRON: '* * * * * *',
        // A check claimed by the process killed below stays claimed for its lease (the pass's
        // budget + 3 × the call timeout + 2 s: 52 s by default, 33 s here) before the restarted
        // one may check it. The kill once landed mid-pass on a loaded machine and the test waited
        // 10 s in vain; the wait below outlasts the lease. (The call timeout stays the default:
        // a check that timed out would wait 30 s more, as a failed one does.)
        POLL_PASS_BUDGET_SECONDS: '1',
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
      },
      [join(out, 'main.js')],
    );
    const slack = new SlackRequester({
      workspace,
      eventsUrl: `http://127.0.0.1:${port}/slack/events`,
      signingSecret: SIGNING_SECRET,
      responseOrigin: api.origin,
    });
    const general = workspace.channelByName('general').id;
    const replies = (text: string) =>
      workspace.messages.filter((m) => m.threadTs && m.text.includes(text));
    try {
      await app.start();
      const sam = workspace.userByLogin('sam.taylor@corp.example').id;
      await slack.command(sam, general, 'Exit code test');
      const view = await waitFor(() =>
        [...workspace.views.values()].find((v) =>
          JSON.stringify(v.view).includes('Suggested approver'),
        ),
      );
      await slack.submitView(view.id, { note_input: 'n' });
      const approval = await waitFor(() => sim.approvals()[0]);
      await waitFor(() => workspace.history(general)[0], 120_000, 'the request message');
      expect(await app.stop()).toEqual({ code: 0, signal: null });

      await app.start();
      await app.kill();
      await app.start();
      sim.decide(approval.djbh, 'agree');
      await waitFor(() => replies('Approved').length === 1, 120_000, 'the decision reply');
      expect(await app.stop()).toEqual({ code: 0, signal: null });
      expect(app.output.join('')).not.toMatch(/Assertion failed|Abort/i);
    } finally {
      await app.kill();
      await api.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
