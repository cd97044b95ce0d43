import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { type Application, startApplication } from '../app.ts';
import { type Config, SANDBOX_DATABASE_FILE } from '../config.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { createSimulator, type Simulator } from '../simulator/simulator.ts';
import { DatabaseError, dialectOf, ensureFolder } from '../store/database.ts';
import { claimSqliteFile, SqliteInUseError } from '../store/sqlite-file.ts';
import { createSandboxRoutes } from './sandbox-server.ts';
import { seedDelegations } from './seed-delegations.ts';
import { seedTemplates } from './seed-templates.ts';
import { SlackRequester } from './slack-requests.ts';
import { type Enterprise, Workspace } from './workspace.ts';

export interface SandboxOptions {
  /** Play an Enterprise Grid organization: people get `W…` ids, and payloads say so. */
  enterprise?: Enterprise;
}

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
 * embedded simulator with its default directory, a Slack workspace stand-in whose Web API the app
 * calls, the app itself in HTTP mode (driven by signed requests exactly as Slack would drive it),
 * and the sandbox page on PORT.
 */
export async function startSandbox(
  config: Config,
  logger: Logger,
  options: SandboxOptions = {},
): Promise<Sandbox> {
  // loadConfig never gives the sandbox another database; this holds for any caller too, since
  // the file is emptied next.
  if (
    config.mode !== 'sandbox' ||
    config.sandboxDataDir === undefined ||
    dialectOf(config.databaseUrl) !== 'sqlite' ||
    resolve(config.databaseUrl) !== resolve(config.sandboxDataDir, SANDBOX_DATABASE_FILE)
  )
    throw new AppError(
      'sandbox_foreign_database',
      `The sandbox runs only on its own ${SANDBOX_DATABASE_FILE} (in SANDBOX_DATA_DIR), and was given another database`,
    );
  // Claimed before it is emptied: a second `npm start` in the same folder is refused here, and
  // never deletes the running sandbox's file under it.
  const file = resolve(config.databaseUrl);
  let release: () => void;
  try {
    ensureFolder(dirname(file));
    release = claimSqliteFile(file);
  } catch (error) {
    if (error instanceof SqliteInUseError) throw new SandboxInUseError(config);
    throw new DatabaseError(file, error);
  }
  try {
    return await startClaimed(config, logger, options, release);
  } catch (error) {
    release();
    throw error;
  }
}

/** Another sandbox runs in the same folder: a second one needs its own folder and port. */
export class SandboxInUseError extends AppError {
  constructor(config: Config) {
    const dir = (config.sandboxDataDir ?? './data').replace(/\/+$/, '');
    const port = config.port === 0 ? 0 : config.port + 1;
    super(
      'sandbox_in_use',
      `Another sandbox is running in ${dir} (SANDBOX_DATA_DIR). To run a second one beside it, give it a folder and a port of its own: SANDBOX_DATA_DIR=${dir}-2 PORT=${port} npm start`,
    );
  }
}

async function startClaimed(
  config: Config,
  logger: Logger,
  options: SandboxOptions,
  release: () => void,
): Promise<Sandbox> {
  // The simulator and the workspace start empty each time; so do the sandbox's own rows.
  // A folder that cannot hold it is reported by opening the database, in one line.
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      rmSync(`${config.databaseUrl}${suffix}`, { force: true });
    } catch {}
  }
  const simulator = await createSimulator({
    port: 0,
    appName: config.approval.appName,
    appKey: config.approval.appKey,
  });
  const workspace = new Workspace({
    ...(options.enterprise ? { enterprise: options.enterprise } : {}),
    people: [
      ...simulator.people.map((p) => ({
        login: p.login,
        name: p.name,
        locale: p.locale,
        ...(p.slack ? { slack: p.slack } : {}),
      })),
      // Sam Taylor's second Slack account, under a personal e-mail the service does not know: the
      // one to link with `/approve link`, or with `npm run accounts` (ACCOUNT_LINKING=admin).
      { login: 'sam.personal', name: 'Sam T', email: 'sam@personal.example', locale: 'en-US' },
    ],
    channels: [
      { name: 'general', appIsMember: true },
      { name: 'random', appIsMember: false },
    ],
  });
  let slack: SlackRequester | undefined;
  const route = createSandboxRoutes({
    workspace,
    simulator,
    slack: () => {
      if (!slack) throw new Error('the app is not started yet');
      return slack;
    },
  });
  // The probes stay on PORT, as without the sandbox: answered by the app behind it.
  let appPort: number | undefined;
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && (path === '/healthz' || path === '/readyz')) {
      void relayProbe(path, appPort, res);
      return;
    }
    route(req, res).catch((error: unknown) => {
      logger.error({ err: error, url: req.url }, 'sandbox request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const signingSecret = randomBytes(16).toString('hex');
  const app = await startApplication(
    {
      ...config,
      // The app behind the sandbox is reached only from this machine.
      port: 0,
      host: '127.0.0.1',
      slack: {
        ...config.slack,
        botToken: workspace.botToken,
        signingSecret,
        apiUrl: `${url}/api/`,
      },
      // The simulator serves the service's web UI too: "Open in approval service" leads to the
      // approver's list there (sign in as the approver first, as with the real service).
      // On this machine: never through a proxy a `.env` copied from production may name.
      approval: {
        ...config.approval,
        baseUrl: simulator.url,
        webUrl: `${simulator.url}/`,
        proxyEnv: {},
      },
    },
    {
      logger,
      seed: async ({ templates, delegations }) => {
        await seedTemplates(templates, workspace);
        await seedDelegations(delegations);
      },
    },
  );
  appPort = app.port;
  slack = new SlackRequester({
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
      release();
    },
  };
}

/** The app's answer to a probe, as it gave it; 503 while the app is not started yet. */
async function relayProbe(path: string, appPort: number | undefined, res: ServerResponse) {
  const answer =
    appPort === undefined
      ? undefined
      : await fetch(`http://127.0.0.1:${appPort}${path}`).catch(() => undefined);
  if (!answer) {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: false, reason: 'the sandbox is starting or stopping' }));
    return;
  }
  res.writeHead(answer.status, { 'content-type': 'application/json' });
  res.end(await answer.text());
}
