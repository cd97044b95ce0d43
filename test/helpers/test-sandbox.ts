import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/sandbox.ts';

/** What the sandbox page reads for one person (`GET /sandbox/api/state`). */
export interface PageState {
  messages: Array<{ text: string; ephemeral: boolean; channel: string; user: string }>;
  views: Array<{ id: string; view: { blocks: unknown[] } }>;
  channels: Array<{ id: string; kind: string }>;
}

/**
 * The sandbox on a free port with its data in a temporary folder, and the page's own calls:
 * `post` as the page posts (JSON, same origin), `state` as it reads one person's view.
 */
export async function startTestSandbox(
  options: SandboxOptions = {},
  env: Record<string, string> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-'));
  const sandbox: Sandbox = await startSandbox(
    loadConfig({
      APP_MODE: 'sandbox',
      PORT: '0',
      SANDBOX_DATA_DIR: dir,
      LOG_LEVEL: 'fatal',
      ...env,
    }),
    createLogger('fatal'),
    options,
  );
  return {
    sandbox,
    dir,
    post: (path: string, body: unknown) =>
      fetch(`${sandbox.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, unknown>>),
    state: (user: string) =>
      fetch(`${sandbox.url}/sandbox/api/state?user=${user}`).then(
        (r) => r.json() as Promise<PageState>,
      ),
    async close() {
      await sandbox.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type TestSandbox = Awaited<ReturnType<typeof startTestSandbox>>;
