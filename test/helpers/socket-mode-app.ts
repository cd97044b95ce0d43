import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Application, startApplication } from '../../src/app.ts';
import { type Config, loadConfig } from '../../src/config.ts';
import { startWebApiServer, type WebApiServer } from '../../src/sandbox/web-api-server.ts';
import { Workspace } from '../../src/sandbox/workspace.ts';
import { createSimulator, type Simulator } from '../../src/simulator/simulator.ts';
import { LogCapture } from './harness.ts';
import { startSocketModeServer } from './socket-mode-server.ts';

export interface SocketModeApp {
  config: Config;
  sim: Simulator;
  workspace: Workspace;
  api: WebApiServer;
  /** Slack's side of the WebSocket: delivers envelopes and resolves with the app's ack. */
  socket: Awaited<ReturnType<typeof startSocketModeServer>>;
  app: Application;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * The whole product over Socket Mode on loopback: the simulator, the workspace stand-in (Web API
 * and `apps.connections.open`), Slack's WebSocket side, a fresh SQLite database, and the app
 * connected with SLACK_APP_TOKEN. `env` adds to or overrides the settings; logs are captured.
 */
export async function startSocketModeApp(env: Record<string, string> = {}): Promise<SocketModeApp> {
  const sim = await createSimulator({ port: 0 });
  const workspace = new Workspace({
    people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: p.locale })),
  });
  const api = await startWebApiServer(workspace);
  const socket = await startSocketModeServer(workspace);
  const dir = mkdtempSync(join(tmpdir(), 'socket-mode-app-'));
  const logs = new LogCapture();
  const config = loadConfig({
    SLACK_BOT_TOKEN: workspace.botToken,
    SLACK_APP_TOKEN: workspace.appToken,
    SLACK_API_URL: api.apiUrl,
    PORT: '0',
    APPROVAL_BASE_URL: sim.url,
    APPROVAL_APP_NAME: 'slack-approvals',
    APPROVAL_APP_KEY: 'sandbox-app-key',
    DATABASE_URL: join(dir, 'a.db'),
    // Tests run passes themselves (app.poll).
    STATUS_POLL_CRON: '0 0 1 1 *',
    // Nor the hot pass (HOT_POLL_CRON): tests run it themselves (app.hotPoll) or turn it on.
    HOT_POLL_CRON: 'off',
    LOG_LEVEL: 'info',
    ...env,
  });
  const app = await startApplication(config, { logDestination: logs });
  await socket.connected;
  return {
    config,
    sim,
    workspace,
    api,
    socket,
    app,
    logs,
    async close() {
      await app.stop();
      await socket.close();
      await api.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
