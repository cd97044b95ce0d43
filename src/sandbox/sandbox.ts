import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type Application, startApplication } from '../app.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { createSimulator, type Simulator } from '../simulator/simulator.ts';
import { SlackRequester } from './slack-requests.ts';
import { handleResponseUrl, handleWebApi } from './web-api-server.ts';
import { Workspace } from './workspace.ts';

export interface Sandbox {
  url: string;
  app: Application;
  workspace: Workspace;
  simulator: Simulator;
  slack: SlackRequester;
  stop(): Promise<void>;
}

/**
 * Everything on one machine, for trying the app without Slack or the approval service: the
 * embedded simulator, a Slack workspace stand-in whose Web API the app calls, and the app itself
 * in HTTP mode, driven by signed requests exactly as Slack would drive it.
 * The sandbox server on PORT serves the Web API under /api/ and the sandbox page.
 */
export async function startSandbox(config: Config, logger: Logger): Promise<Sandbox> {
  const simulator = await createSimulator({
    port: 0,
    appName: config.approval.appName,
    appKey: config.approval.appKey,
  });
  const workspace = new Workspace({
    people: simulator.people.map((p) => ({ login: p.login, name: p.name, locale: p.locale })),
    channels: [
      { name: 'general', appIsMember: true },
      { name: 'random', appIsMember: false },
    ],
  });
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const method = /^\/api\/([\w.]+)$/.exec(url.pathname)?.[1];
    if (url.pathname.startsWith('/respond/')) {
      void handleResponseUrl(workspace, url.pathname, req, res);
      return;
    }
    if (req.method === 'POST' && method) {
      void handleWebApi(workspace, method, req, res);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('slack-approvals sandbox\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  const url = `http://127.0.0.1:${port}`;
  const signingSecret = randomBytes(16).toString('hex');
  const app = await startApplication(
    {
      ...config,
      port: 0,
      slack: { botToken: workspace.botToken, signingSecret, apiUrl: `${url}/api/` },
      approval: { ...config.approval, baseUrl: simulator.url },
    },
    { logger },
  );
  const slack = new SlackRequester({
    workspace,
    eventsUrl: `http://127.0.0.1:${app.port}/slack/events`,
    signingSecret,
    responseOrigin: url,
  });
  return {
    url,
    app,
    workspace,
    simulator,
    slack,
    async stop() {
      await app.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await simulator.close();
    },
  };
}
