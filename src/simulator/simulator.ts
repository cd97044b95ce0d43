import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoint } from '../approval-service/approval-service-error.ts';
import { createAdminRoutes } from './admin-routes.ts';
import { loadDirectory, type Person } from './directory.ts';
import { ENDPOINTS, FaultRegistry, type Faults } from './faults.ts';
import { jsonObject, Reply, readBody, send, sendHtml } from './http-replies.ts';
import { type SimulatedApproval, SimulatorState } from './simulator-state.ts';
import { createTo3partEndpoints, route } from './to3part-endpoints.ts';
import { createWebUi } from './web-ui.ts';

export type { Faults } from './faults.ts';
export type { SimulatedApproval, SimulatorDecision } from './simulator-state.ts';

/**
 * A local stand-in for the approval service that behaves like the real one (OpenC3 "to3part",
 * see docs/approval-service.md): application errors are HTTP 200 with `stat:false`,
 * formats are checked before credentials, quotes are refused, 4-byte characters break the database,
 * unknown approval numbers answer `data:null`, and approvals never expire.
 * It also serves admin routes under /simulator/api (admin-routes.ts), and the part of the web UI
 * that the app links to: the approver's list of approvals (web-ui.ts). State lives in memory.
 */

export interface SimulatorOptions {
  port?: number;
  host?: string;
  appName?: string;
  appKey?: string;
  directory?: Person[];
  now?: () => Date;
  /** Characters the note column holds: 20,000 (default), or 5,000 on installs that missed the update. */
  noteLimit?: number;
}

export interface Simulator {
  url: string;
  port: number;
  people: Person[];
  approvals(): SimulatedApproval[];
  decide(djbh: string, decision: 'agree' | 'refuse'): SimulatedApproval | undefined;
  /** Gives a pending approval to another approver (the service's administrators can). */
  reassign(djbh: string, approverLogin: string): SimulatedApproval | undefined;
  /**
   * Deletes an approval, as an operator clearing the service's table would: from then on the
   * service answers its number with `data: null`, like any number it never issued.
   */
  forget(djbh: string): boolean;
  /** Gives the app a new key, as an operator rotating it would: the old one answers `key err`. */
  rotateKey(appKey: string): void;
  /** Logs a person out: their token changes; the old one resolves for about a minute more. */
  logout(login: string): Person | undefined;
  setFaults(endpoint: Endpoint | 'all', faults: Faults): void;
  clearFaults(): void;
  /** How many requests each endpoint has received, for tests that count calls. */
  requestCounts(): Record<Endpoint, number>;
  /** The most requests one endpoint was answering at the same time, since the start. */
  peakConcurrency(): Record<Endpoint, number>;
  /** The last requests received (at most 100), as sent: for tests that check what a client sends. */
  received(): ReceivedRequest[];
  close(): Promise<void>;
}

export interface ReceivedRequest {
  endpoint: Endpoint;
  contentType: string | undefined;
  /** Header names, lower case; values are not kept (they hold credentials). */
  headers: string[];
  query: Record<string, string>;
  body: string;
}

export const SIMULATOR_DEFAULTS = {
  port: 8787,
  appName: 'slack-approvals',
  appKey: 'sandbox-app-key',
} as const;

const NGINX_502 =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>';

export async function createSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const state = new SimulatorState(
    options.directory ?? loadDirectory(),
    options.now ?? (() => new Date()),
  );
  const faults = new FaultRegistry();
  const credentials = {
    appName: options.appName ?? SIMULATOR_DEFAULTS.appName,
    appKey: options.appKey ?? SIMULATOR_DEFAULTS.appKey,
  };
  const answer = createTo3partEndpoints(state, credentials, options.noteLimit);
  const admin = createAdminRoutes(state, faults);
  const web = createWebUi(state);
  const zero = () => Object.fromEntries(ENDPOINTS.map((e) => [e, 0])) as Record<Endpoint, number>;
  const counts = zero();
  const inFlight = zero();
  const peak = zero();
  const received: ReceivedRequest[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    if (url.pathname.startsWith('/simulator/api/')) {
      send(res, admin(method, url.pathname, jsonObject(raw)));
      return;
    }
    const endpoint = route(method, url.pathname);
    if (!endpoint && web(req, res, url.pathname, jsonObject(raw))) return;
    if (!endpoint) {
      sendHtml(res, 404, '<html><body><h1>404 Not Found</h1></body></html>');
      return;
    }
    counts[endpoint]++;
    received.push({
      endpoint,
      contentType: req.headers['content-type'],
      headers: Object.keys(req.headers),
      query: Object.fromEntries(url.searchParams),
      body: raw,
    });
    if (received.length > 100) received.shift();
    inFlight[endpoint]++;
    peak[endpoint] = Math.max(peak[endpoint], inFlight[endpoint]);
    try {
      await answerWithFaults(endpoint, req, res, url, raw);
    } finally {
      inFlight[endpoint]--;
    }
  }

  /** The endpoint's answer, as the faults in force turn it (or the connection) into something else. */
  async function answerWithFaults(
    endpoint: Endpoint,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: string,
  ): Promise<void> {
    const f = faults.for(endpoint);
    if (f.latencyMs) await new Promise((r) => setTimeout(r, f.latencyMs));
    if (f.outage) {
      req.socket.destroy();
      return;
    }
    if (f.html502) {
      sendHtml(res, 502, NGINX_502);
      return;
    }
    let reply: Reply;
    try {
      reply = answer(endpoint, { req, query: url.searchParams, raw, faults: f });
    } catch (error) {
      // Dancer's answer to an uncaught exception.
      const message = error instanceof Error ? error.message : String(error);
      reply = new Reply(500, {
        stat: false,
        info: message,
        exception: `${message} at /data/Software/mydan/JOB/lib/api/to3part.pm line 57.\n`,
      });
    }
    if (f.malformedJson) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body).slice(0, 20));
      return;
    }
    if (f.federationProxy) {
      const body = reply.body as Record<string, unknown>;
      reply =
        body.stat === false
          ? new Reply(400, { code: 400, info: body.info ?? 'error' })
          : new Reply(200, { code: 200, data: body.data ?? body });
    }
    send(res, reply);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, new Reply(500, { stat: false, info: String(error) }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? SIMULATOR_DEFAULTS.port, options.host ?? '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    people: state.people,
    approvals: () => state.list(),
    decide: (djbh, decision) => state.decide(djbh, decision),
    reassign: (djbh, approverLogin) => state.reassign(djbh, approverLogin),
    forget: (djbh) => state.approvals.delete(djbh),
    rotateKey: (appKey) => {
      credentials.appKey = appKey;
    },
    logout: (login) => state.logout(login),
    setFaults: (endpoint, set) => faults.set(endpoint, set),
    clearFaults: () => faults.clear(),
    requestCounts: () => ({ ...counts }),
    peakConcurrency: () => ({ ...peak }),
    received: () => [...received],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
