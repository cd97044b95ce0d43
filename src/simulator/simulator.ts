import { randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { Endpoint } from '../approval-service/approval-service-error.ts';
import { loadDirectory, type Person } from './directory.ts';
import { storeInColumn } from './mysql-literal.ts';

/**
 * A local stand-in for the approval service that behaves like the real one (OpenC3 "to3part",
 * see shared/approval-service-behaviour.md): application errors are HTTP 200 with `stat:false`,
 * formats are checked before credentials, quotes are refused, 4-byte characters break the database,
 * unknown approval numbers answer `data:null`, and approvals never expire.
 * It also serves admin routes under /simulator/api for tools, tests and the sandbox.
 * State lives in memory.
 */

export type SimulatorDecision = 'pending' | 'approved' | 'rejected';

export interface SimulatedApproval {
  djbh: string;
  title: string;
  note: string;
  requester: string;
  approver: string;
  decision: SimulatorDecision;
  created: string;
  decided: string | null;
}

export interface Faults {
  /** Added before answering, in ms. */
  latencyMs?: number;
  /** The connection is dropped without an answer. */
  outage?: boolean;
  /** nginx's HTML 502 page. */
  html502?: boolean;
  /** A JSON body cut in the middle. */
  malformedJson?: boolean;
  /** Answers wrapped as a federation proxy would: `{code:200,data}`. */
  federationProxy?: boolean;
  /** Status entries without `user_id`, as service versions before September 2023 send them. */
  legacyStatus?: boolean;
  /** The user-info endpoint fails as a broken single sign-on does. */
  ssoError?: boolean;
}

export interface SimulatorOptions {
  port?: number;
  host?: string;
  appName?: string;
  appKey?: string;
  directory?: Person[];
  now?: () => Date;
}

export interface Simulator {
  url: string;
  port: number;
  people: Person[];
  approvals(): SimulatedApproval[];
  decide(djbh: string, decision: 'agree' | 'refuse'): SimulatedApproval | undefined;
  /** Logs a person out: their token changes; the old one resolves for about a minute more. */
  logout(login: string): Person | undefined;
  setFaults(endpoint: Endpoint | 'all', faults: Faults): void;
  clearFaults(): void;
  /** How many requests each endpoint has received, for tests that count calls. */
  requestCounts(): Record<Endpoint, number>;
  /** The most requests one endpoint was answering at the same time, since the start. */
  peakConcurrency(): Record<Endpoint, number>;
  close(): Promise<void>;
}

export const SIMULATOR_DEFAULTS = {
  port: 8787,
  appName: 'slack-approvals',
  appKey: 'sandbox-app-key',
} as const;

const FORMAT = /^[a-zA-Z0-9.\-_@]+$/;
const FORMAT_TEXT = '(?^:^[a-zA-Z0-9.\\-_@]+$)';
const ENDPOINTS: Endpoint[] = ['start-approval', 'approval-status', 'department', 'user-info'];
const DJBH_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const ACTION_NAMES: Record<SimulatorDecision, string> = {
  pending: '待办',
  approved: '同意',
  rejected: '不同意',
};

const faultsSchema = z.object({
  endpoint: z.enum([...ENDPOINTS, 'all']).default('all'),
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  outage: z.boolean().optional(),
  html502: z.boolean().optional(),
  malformedJson: z.boolean().optional(),
  federationProxy: z.boolean().optional(),
  legacyStatus: z.boolean().optional(),
  ssoError: z.boolean().optional(),
});

class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export async function createSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const appName = options.appName ?? SIMULATOR_DEFAULTS.appName;
  const appKey = options.appKey ?? SIMULATOR_DEFAULTS.appKey;
  const people = (options.directory ?? loadDirectory()).map((p) => ({ ...p }));
  const now = options.now ?? (() => new Date());
  const byLogin = new Map(people.map((p) => [p.login, p]));
  const byToken = new Map(people.map((p) => [p.token, p]));
  const approvals = new Map<string, SimulatedApproval>();
  const faults = new Map<Endpoint, Faults>();
  const counts = Object.fromEntries(ENDPOINTS.map((e) => [e, 0])) as Record<Endpoint, number>;
  const inFlight = Object.fromEntries(ENDPOINTS.map((e) => [e, 0])) as Record<Endpoint, number>;
  const peak = Object.fromEntries(ENDPOINTS.map((e) => [e, 0])) as Record<Endpoint, number>;

  const ok = (body: Record<string, unknown>) => new Reply(200, body);
  const fail = (text: string, msg = text) =>
    new Reply(200, { stat: false, info: text, code: 1, msg });

  function newDjbh(): string {
    for (;;) {
      let id = '';
      for (let i = 0; i < 11; i++) id += DJBH_CHARS[randomInt(DJBH_CHARS.length)];
      id += String.fromCharCode(97 + randomInt(26));
      if (!approvals.has(id)) return id;
    }
  }

  /** The service's `check format` step: every named field, in order, before credentials. */
  function checkFormat(
    values: Record<string, unknown>,
    mandatory: string[],
    optional: string[],
    pattern?: RegExp,
  ): Reply | undefined {
    for (const field of [...mandatory, ...optional]) {
      const value = values[field];
      if (value === undefined || value === null) {
        if (mandatory.includes(field)) return fail(`check format fail ${field} undef`);
        continue;
      }
      const text = String(value);
      if (text.includes("'")) return fail(`check format fail ${field} format error`);
      if (pattern && !pattern.test(text))
        return fail(`check format fail ${field} format error ${FORMAT_TEXT}`);
    }
    return undefined;
  }

  function checkKey(req: IncomingMessage): Reply | undefined {
    const name = header(req, 'appname');
    const key = header(req, 'appkey');
    if (name === appName && key === appKey) return undefined;
    return fail('key err');
  }

  function startApproval(req: IncomingMessage, body: Record<string, unknown>): Reply {
    const refused =
      checkFormat(
        body,
        ['special_approver', 'title', 'apply_note'],
        ['user_id', 'route_user_id', 'route_node', 'participant'],
      ) ?? checkKey(req);
    if (refused) return refused;
    const columns = [
      ['user_id', body.user_id ?? 'sys@app', 100],
      ['special_approver', body.special_approver, 100],
      ['title', body.title, 200],
      ['apply_note', body.apply_note, 5000],
    ] as const;
    const stored: Record<string, string> = {};
    for (const [column, value, max] of columns) {
      const result = storeInColumn(String(value), column, max);
      if (!result.ok) return fail(result.error, `Err: ${result.error}`);
      stored[column] = result.value;
    }
    const djbh = newDjbh();
    approvals.set(djbh, {
      djbh,
      title: stored.title ?? '',
      note: stored.apply_note ?? '',
      requester: stored.user_id ?? 'sys@app',
      approver: stored.special_approver ?? '',
      decision: 'pending',
      created: now().toISOString(),
      decided: null,
    });
    return ok({ stat: true, code: 0, mesg: 'ok', data: { djbh, msg: 'ok' } });
  }

  function approvalStatus(req: IncomingMessage, query: URLSearchParams, f: Faults): Reply {
    const djbh = query.get('djbh');
    const refused = checkFormat({ djbh }, ['djbh'], [], FORMAT) ?? checkKey(req);
    if (refused) return refused;
    const approval = approvals.get(djbh ?? '');
    if (!approval) return ok({ stat: true, code: 0, msg: 'ok', data: { isend: 0, data: null } });
    const entry: Record<string, string> = { actionname: ACTION_NAMES[approval.decision] };
    if (!f.legacyStatus) entry.user_id = approval.approver;
    const isend = approval.decision === 'pending' ? 0 : 1;
    return ok({ stat: true, code: 0, msg: 'ok', data: { isend, data: [entry] } });
  }

  function department(req: IncomingMessage, query: URLSearchParams): Reply {
    const email = query.get('email');
    const refused = checkFormat({ email }, ['email'], [], FORMAT) ?? checkKey(req);
    if (refused) return refused;
    const address = email ?? '';
    // The lookup script refuses these before looking anyone up.
    if (address.length < 2 || /^[.\-_@]/.test(address)) return fail('get userinfo fail');
    const person = byLogin.get(address);
    const leaders = person?.leaders ?? {
      productLine: person?.leader ?? '',
      department: person?.leader ?? '',
      subDepartment: person?.leader ?? '',
    };
    return ok({
      msg: 'ok',
      code: 0,
      stat: true,
      data: {
        sybDeptName: person?.productLine ?? '',
        oneDeptName: person?.department ?? '',
        twoDeptName: person?.subDepartment ?? '',
        sybLeaderId: leaders.productLine,
        oneLeaderId: leaders.department,
        twoLeaderId: leaders.subDepartment,
        // An unknown person is not an error: the service makes up defaults.
        accountName: person?.name ?? address.split('@')[0],
        accountId: person?.login ?? address,
        mobile: person?.mobile ?? '',
      },
    });
  }

  // Sessions that were logged out, still answered from the service's cache for about a minute.
  const loggedOut = new Map<string, { person: Person; until: number }>();
  const PROFILE_CACHE_MS = 60_000;

  function userInfo(req: IncomingMessage, f: Faults): Reply {
    if (f.ssoError) return new Reply(200, { stat: false, info: 'sso code error: invalid code' });
    const token = header(req, 'token') ?? '';
    const cached = loggedOut.get(token);
    const person =
      byToken.get(token) ?? (cached && now().getTime() < cached.until ? cached.person : undefined);
    if (!person) return new Reply(200, { stat: false, code: 10000 });
    return ok({
      admin: '0',
      showconnector: '1',
      company: 'corp',
      name: (person.login.split('@')[0] ?? '').toUpperCase(),
      email: person.login,
    });
  }

  /** Ends a person's session: a new token replaces theirs; the old one lingers in the cache. */
  function logout(login: string): Person | undefined {
    const person = byLogin.get(login);
    if (!person) return undefined;
    loggedOut.set(person.token, { person, until: now().getTime() + PROFILE_CACHE_MS });
    byToken.delete(person.token);
    person.token = randomToken();
    byToken.set(person.token, person);
    return person;
  }

  function decide(djbh: string, decision: 'agree' | 'refuse'): SimulatedApproval | undefined {
    const approval = approvals.get(djbh);
    if (!approval) return undefined;
    // The first decision wins; later ones are ignored.
    if (approval.decision === 'pending') {
      approval.decision = decision === 'agree' ? 'approved' : 'rejected';
      approval.decided = now().toISOString();
    }
    return { ...approval };
  }

  async function admin(
    method: string,
    path: string,
    body: Record<string, unknown>,
  ): Promise<Reply> {
    if (method === 'GET' && path === '/simulator/api/directory') return new Reply(200, { people });
    const logoutPath = /^\/simulator\/api\/people\/([^/]+)\/logout$/.exec(path);
    if (method === 'POST' && logoutPath) {
      const person = logout(decodeURIComponent(logoutPath[1] ?? ''));
      return person ? new Reply(200, { person }) : new Reply(404, { error: 'no such person' });
    }
    if (method === 'GET' && path === '/simulator/api/approvals')
      return new Reply(200, { approvals: [...approvals.values()].reverse() });
    const decisionPath = /^\/simulator\/api\/approvals\/([^/]+)\/decision$/.exec(path);
    if (method === 'POST' && decisionPath) {
      const decision = body.decision;
      if (decision !== 'agree' && decision !== 'refuse')
        return new Reply(400, { error: 'decision must be "agree" or "refuse"' });
      const approval = decide(decodeURIComponent(decisionPath[1] ?? ''), decision);
      return approval
        ? new Reply(200, { approval })
        : new Reply(404, { error: 'no such approval' });
    }
    if (path === '/simulator/api/faults') {
      if (method === 'GET') return new Reply(200, { faults: Object.fromEntries(faults) });
      if (method === 'DELETE') {
        faults.clear();
        return new Reply(200, { faults: {} });
      }
      if (method === 'POST') {
        const parsed = faultsSchema.safeParse(body);
        if (!parsed.success) return new Reply(400, { error: parsed.error.message });
        const { endpoint, ...set } = parsed.data;
        setFaults(endpoint, set);
        return new Reply(200, { faults: Object.fromEntries(faults) });
      }
    }
    return new Reply(404, { error: `no admin route ${method} ${path}` });
  }

  function setFaults(endpoint: Endpoint | 'all', set: Faults): void {
    for (const e of endpoint === 'all' ? ENDPOINTS : [endpoint]) faults.set(e, { ...set });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    if (url.pathname.startsWith('/simulator/api/')) {
      const body = raw ? safeJson(raw) : {};
      send(res, await admin(method, url.pathname, isObject(body) ? body : {}));
      return;
    }
    const endpoint = route(method, url.pathname);
    if (!endpoint) {
      sendHtml(res, 404, '<html><body><h1>404 Not Found</h1></body></html>');
      return;
    }
    counts[endpoint]++;
    inFlight[endpoint]++;
    peak[endpoint] = Math.max(peak[endpoint], inFlight[endpoint]);
    try {
      await answerEndpoint(endpoint, req, res, url, raw);
    } finally {
      inFlight[endpoint]--;
    }
  }

  async function answerEndpoint(
    endpoint: Endpoint,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    raw: string,
  ): Promise<void> {
    const f = faults.get(endpoint) ?? {};
    if (f.latencyMs) await new Promise((r) => setTimeout(r, f.latencyMs));
    if (f.outage) {
      req.socket.destroy();
      return;
    }
    if (f.html502) {
      sendHtml(
        res,
        502,
        '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>',
      );
      return;
    }
    let reply: Reply;
    try {
      reply = answer(endpoint, req, url.searchParams, raw, f);
    } catch (error) {
      reply = new Reply(500, { stat: false, info: String(error) });
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

  function answer(
    endpoint: Endpoint,
    req: IncomingMessage,
    query: URLSearchParams,
    raw: string,
    f: Faults,
  ): Reply {
    switch (endpoint) {
      case 'start-approval':
        return startApproval(req, parseRequestBody(req, raw));
      case 'approval-status':
        return approvalStatus(req, query, f);
      case 'department':
        return department(req, query);
      case 'user-info':
        return userInfo(req, f);
    }
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
    people,
    approvals: () => [...approvals.values()].map((a) => ({ ...a })),
    decide,
    logout,
    setFaults,
    clearFaults: () => faults.clear(),
    requestCounts: () => ({ ...counts }),
    peakConcurrency: () => ({ ...peak }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function randomToken(): string {
  let token = '';
  for (let i = 0; i < 64; i++) token += DJBH_CHARS[randomInt(DJBH_CHARS.length)];
  return token;
}

function route(method: string, path: string): Endpoint | undefined {
  if (path === '/api/job/to3part/v1/approval') {
    if (method === 'POST') return 'start-approval';
    if (method === 'GET') return 'approval-status';
  }
  if (method === 'GET' && path === '/api/connector/to3part/v1/user/department') return 'department';
  if (method === 'GET' && path === '/api/connector/to3part/v1/user/userinfo') return 'user-info';
  return undefined;
}

/** JSON when the caller says so; otherwise a form, read byte by byte as the service's stack does. */
function parseRequestBody(req: IncomingMessage, raw: string): Record<string, unknown> {
  const type = header(req, 'content-type') ?? '';
  if (type.startsWith('application/json')) {
    const parsed: unknown = JSON.parse(raw || '{}');
    if (!isObject(parsed)) throw new Error('JSON body is not an object');
    return parsed;
  }
  const form = new URLSearchParams(raw);
  return Object.fromEntries(
    [...form].map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('latin1')]),
  );
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function send(res: ServerResponse, reply: Reply): void {
  // The real service sends UTF-8 JSON without a charset in the header.
  res.writeHead(reply.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(reply.body));
}

function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'content-type': 'text/html' });
  res.end(html);
}
