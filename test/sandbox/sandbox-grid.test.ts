import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/sandbox.ts';
import { waitFor } from '../helpers/harness.ts';

// The sandbox playing an Enterprise Grid organization with the app installed org-wide: its people
// have W… ids, and the page's calls work for them as for anyone.

let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-grid-'));
  sandbox = await startSandbox(
    loadConfig({ APP_MODE: 'sandbox', PORT: '0', SANDBOX_DATA_DIR: dir, LOG_LEVEL: 'fatal' }),
    createLogger('fatal'),
    { enterprise: { id: 'E0GRID', name: 'Globular Construct', orgWideInstall: true } },
  );
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

const post = (path: string, body: unknown) =>
  fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then((r) => r.json() as Promise<Record<string, unknown>>);
const viewsOf = (user: string) =>
  fetch(`${sandbox.url}/sandbox/api/state?user=${user}`)
    .then((r) => r.json() as Promise<{ views: Array<{ id: string; view: unknown }> }>)
    .then((s) => s.views);

describe('the sandbox as an Enterprise Grid organization', () => {
  it('lets a W… member type /approve, fill in the form and start an approval', async () => {
    const alex = sandbox.workspace.userByLogin('alex.kim@corp.example').id;
    expect(alex).toMatch(/^W/);
    await post('/sandbox/api/message', {
      user: alex,
      channel: sandbox.workspace.channelByName('general').id,
      text: '/approve Grid monitor',
    });
    const view = await waitFor(async () =>
      (await viewsOf(alex)).find((v) => JSON.stringify(v.view).includes('Suggested approver')),
    );
    const result = await post(`/sandbox/api/views/${view.id}/submit`, {
      values: { title_input: 'Grid monitor', note_input: 'A second screen' },
    });
    expect(result).toEqual({ ok: true, errors: null });
    const approval = await waitFor(() =>
      sandbox.simulator.approvals().find((a) => a.title === 'Grid monitor'),
    );
    // The request in the channel, and the approver (a W… member too) told in their DM.
    const general = sandbox.workspace.channelByName('general').id;
    await waitFor(() =>
      sandbox.workspace.history(general).find((m) => m.text.includes(approval.djbh)),
    );
    const approverDm = sandbox.workspace.appDm(
      sandbox.workspace.userByLogin(approval.approver).id,
    ).id;
    await waitFor(
      () => sandbox.workspace.history(approverDm).find((m) => m.text.includes(approval.djbh)),
      5000,
      'the approver DM',
    );
  });
});
