import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import axios, { type AxiosResponse, isAxiosError } from 'axios';
import type { z } from 'zod';
import type {
  ApprovalService,
  ApprovalStatus,
  Decision,
  Department,
  Profile,
  StartApprovalInput,
} from '../approvals/approval-types.ts';
import { redactText } from '../redact.ts';
import { ApprovalServiceError, ENDPOINT_ROUTES, type Endpoint } from './approval-service-error.ts';
import {
  departmentBody,
  failureBody,
  profileBody,
  startApprovalBody,
  statusBody,
} from './approval-service-schemas.ts';
import { keepAliveGets, MAX_ANSWER_BYTES, type RawAnswer } from './keep-alive-get.ts';

export interface ApprovalServiceClientOptions {
  baseUrl: string;
  appName: string;
  appKey: string;
  /** Per request. Default 10 s. */
  timeoutMs?: number;
  /** Characters the service's note column holds (20,000; 5,000 on installs that missed an update). */
  noteLimit?: number;
  /** Pauses before each retry of a GET that found the service unavailable. Default 250 ms, 1 s. */
  retryDelaysMs?: readonly number[];
  sleep?: (ms: number) => Promise<void>;
  /**
   * Where HTTP_PROXY, HTTPS_PROXY and NO_PROXY are read: every call (axios's and the status GET)
   * goes through the proxy they name. The app passes config's (the environment and `.env`);
   * default, for tools beside it: the process's environment.
   */
  proxyEnv?: NodeJS.ProcessEnv;
}

const DECISIONS: Record<string, Decision> = {
  待办: 'pending',
  同意: 'approved',
  不同意: 'rejected',
};
// Errors a request gets before any byte reached the service: safe to retry even for a POST.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * HTTP client of the approval service (OpenC3 "to3part"). Decides on the body's `stat`, never on
 * the HTTP status alone, since the service answers every application error with HTTP 200.
 *
 * Retries: the GETs are retried with backoff while the service is `unavailable`. Starting an
 * approval is not idempotent (each POST creates a new approval number and there is no way to
 * look one up), so the POST is retried only when the connection was refused before anything was
 * sent; after a timeout or a 5xx it fails with `maybeCreated: true` so the person can check the
 * service before trying again, instead of us creating a duplicate.
 */
export function createApprovalServiceClient(
  options: ApprovalServiceClientOptions,
): ApprovalService {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const transport = httpTransport(baseUrl, timeoutMs, options.proxyEnv ?? process.env);
  const appHeaders = { appname: options.appName, appkey: options.appKey };
  const columnLimits: Record<string, number> = {
    ...COLUMN_LIMITS,
    cont: options.noteLimit ?? 20_000,
  };
  const delays = options.retryDelaysMs ?? [250, 1000];
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));

  async function call(
    endpoint: Endpoint,
    config: { params?: Record<string, string>; data?: unknown; headers: Record<string, string> },
  ): Promise<unknown> {
    const { method } = ENDPOINT_ROUTES[endpoint];
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(transport, endpoint, config, columnLimits);
      } catch (error) {
        const retryable =
          error instanceof ApprovalServiceError &&
          error.kind === 'unavailable' &&
          (method === 'GET' || !error.maybeCreated);
        const delay = delays[attempt];
        if (!retryable || delay === undefined) throw error;
        await sleep(delay);
      }
    }
  }

  return {
    async startApproval(input: StartApprovalInput) {
      const body = {
        user_id: encodeValue(input.requester),
        special_approver: encodeValue(input.approver),
        title: encodeValue(input.title),
        apply_note: encodeValue(input.note),
        // Accepted and ignored by the service; sent as its own documentation does.
        route_user_id: '',
        route_node: '0',
        participant: '',
      };
      const json = await call('start-approval', {
        data: body,
        headers: { ...appHeaders, 'content-type': 'application/json' },
      });
      const parsed = parse('start-approval', startApprovalBody, json);
      return { djbh: parsed.data.djbh };
    },

    async getStatus(djbh: string): Promise<ApprovalStatus> {
      const json = await call('approval-status', { params: { djbh }, headers: appHeaders });
      return toStatus(parse('approval-status', statusBody, json).data);
    },

    async getDepartment(email: string): Promise<Department> {
      const json = await call('department', { params: { email }, headers: appHeaders });
      const d = parse('department', departmentBody, json).data;
      return {
        login: d.accountId || email,
        name: d.accountName,
        mobile: d.mobile,
        productLine: d.sybDeptName,
        department: d.oneDeptName,
        subDepartment: d.twoDeptName,
        leaders: {
          subDepartment: d.twoLeaderId,
          department: d.oneLeaderId,
          productLine: d.sybLeaderId,
        },
      };
    },

    async getProfile(sessionToken: string): Promise<Profile> {
      // Only the token: the profile endpoint needs no app credentials, and they are not its business.
      const json = await call('user-info', { headers: { token: sessionToken } });
      const p = parse('user-info', profileBody, json);
      return { login: p.email, name: p.name, company: p.company, admin: p.admin === '1' };
    },
  };
}

/** The service's calls over HTTP: axios with keep-alive agents, the status GET on its own path. */
function httpTransport(
  baseUrl: string,
  timeoutMs: number,
  proxyEnv: NonNullable<ApprovalServiceClientOptions['proxyEnv']>,
): Transport {
  // A poll pass makes thousands of calls: reusing connections keeps each one at the service's
  // own latency instead of adding a TCP (and TLS) handshake.
  // The agents, not axios, take the proxy from the environment, and so does the status GET's
  // dispatcher: every call goes the same way, through the proxy or not.
  const agents = {
    http: new HttpAgent({ keepAlive: true, proxyEnv }),
    https: new HttpsAgent({ keepAlive: true, proxyEnv }),
  };
  const http = axios.create({
    baseURL: baseUrl,
    timeout: timeoutMs,
    // We judge every answer ourselves: status, then JSON, then `stat`.
    validateStatus: () => true,
    responseType: 'text',
    transformResponse: [(body: unknown) => body],
    maxRedirects: 0,
    httpAgent: agents.http,
    httpsAgent: agents.https,
  });
  // The status check, the call a sweep makes per approval, skips axios (see keep-alive-get.ts).
  // Its URL is read once, as the other calls read theirs (base URL, then the route).
  const statusUrl = new URL(`${baseUrl}${ENDPOINT_ROUTES['approval-status'].path}`);
  const statusGet = keepAliveGets(statusUrl.origin, proxyEnv);
  return (endpoint, config) => {
    const { method, path } = ENDPOINT_ROUTES[endpoint];
    if (endpoint === 'approval-status')
      return statusGet(
        `${statusUrl.pathname}?djbh=${encodeURIComponent(config.params?.djbh ?? '')}`,
        config.headers,
        timeoutMs,
      );
    return http
      .request<string>({ method, url: path, ...config })
      .then((response: AxiosResponse<string>) => ({
        status: response.status,
        contentType: String(response.headers['content-type'] ?? ''),
        body: response.data,
      }));
  };
}

/**
 * The service pastes values into SQL literals, so MySQL reads `\n` as a newline and a trailing
 * backslash breaks the statement. Doubling every backslash makes MySQL store exactly what was typed.
 */
export function encodeValue(value: string): string {
  return value.replaceAll('\\', '\\\\');
}

function isRefusal(json: unknown): boolean {
  return typeof json === 'object' && json !== null && (json as { stat?: unknown }).stat === false;
}

/** Sends one request; fails like a socket does (an error with a `code`). */
type Transport = (
  endpoint: Endpoint,
  config: { params?: Record<string, string>; data?: unknown; headers: Record<string, string> },
) => Promise<RawAnswer>;

async function send(
  transport: Transport,
  endpoint: Endpoint,
  config: { params?: Record<string, string>; data?: unknown; headers: Record<string, string> },
  columnLimits: Record<string, number>,
): Promise<unknown> {
  const { method } = ENDPOINT_ROUTES[endpoint];
  let response: RawAnswer;
  try {
    response = await transport(endpoint, config);
  } catch (error) {
    throw transportError(endpoint, error);
  }
  // A service or a proxy that quotes what it was sent (its error text, an HTML page) would hand
  // the app key or a session token on to the error and the logs: hidden from whatever an error
  // quotes, before it is cut. A good answer is read as it came (a short key may be any word).
  const sent = [config.headers.appkey, config.headers.token];
  const hide = (text: string) => redactText(text, sent);
  const { status } = response;
  let json: unknown;
  try {
    json = JSON.parse(response.body);
  } catch {
    throw new ApprovalServiceError(
      `HTTP ${status} with a body that is not JSON (${describeBody({ ...response, body: hide(response.body) })}); the service or a proxy in front of it is failing`,
      { kind: 'unavailable', endpoint, maybeCreated: method === 'POST' },
    );
  }
  if (isFederationProxy(json)) {
    throw new ApprovalServiceError(
      'the answer has the envelope of a federation proxy ({code, data|info}), not of the service itself; point APPROVAL_BASE_URL at the approval service, not at the proxy',
      { kind: 'protocol', endpoint },
    );
  }
  if (status >= 500) {
    throw new ApprovalServiceError(
      `HTTP ${status}: the service failed (${serviceText(json, hide)})`,
      {
        kind: 'unavailable',
        endpoint,
        maybeCreated: method === 'POST',
      },
    );
  }
  // Only an answer with `stat: false` can be a refusal; asking zod of every good answer cost a
  // failed parse (issues and all) per status check.
  const failure = isRefusal(json) ? failureBody.safeParse(json) : undefined;
  if (failure?.success) throw refusal(endpoint, failure.data, columnLimits, hide);
  if (status !== 200) {
    throw new ApprovalServiceError(`unexpected HTTP ${status}; is APPROVAL_BASE_URL right?`, {
      kind: 'protocol',
      endpoint,
    });
  }
  return json;
}

function transportError(endpoint: Endpoint, error: unknown): ApprovalServiceError {
  // Axios's errors and keepAliveGet's both carry the socket's code.
  const code =
    isAxiosError(error) || (error instanceof Error && 'code' in error)
      ? String((error as { code?: unknown }).code ?? 'unknown')
      : 'unknown';
  const notSent = NOT_SENT_CODES.has(code);
  const timedOut = code === 'ECONNABORTED' || code === 'ETIMEDOUT';
  const what = timedOut
    ? 'no answer before the timeout'
    : code === 'ERESPONSETOOLARGE'
      ? `an answer longer than ${MAX_ANSWER_BYTES} bytes; dropped`
      : notSent
        ? `could not connect (${code})`
        : `connection failed (${code})`;
  // The axios error holds the request headers (app key, session token): keep only its code.
  return new ApprovalServiceError(what, {
    kind: 'unavailable',
    endpoint,
    maybeCreated: ENDPOINT_ROUTES[endpoint].method === 'POST' && !notSent,
    cause: new Error(code),
  });
}

function refusal(
  endpoint: Endpoint,
  body: z.infer<typeof failureBody>,
  columnLimits: Record<string, number>,
  hide: (text: string) => string,
): ApprovalServiceError {
  const said = hide(body.info ?? body.msg ?? body.mesg ?? '').slice(0, 300);
  const details = { endpoint, serviceCode: body.code, serviceMessage: said };
  if (said === 'key err')
    return new ApprovalServiceError(
      'the service refused the app credentials (key err); check APPROVAL_APP_NAME and APPROVAL_APP_KEY',
      { ...details, kind: 'credentials' },
    );
  const format = /^check format fail (\S+)/.exec(said);
  if (format)
    return new ApprovalServiceError(`the service refused the request: ${said}`, {
      ...details,
      kind: 'invalid-request',
      field: format[1],
    });
  const database = databaseProblem(said, columnLimits);
  if (database)
    return new ApprovalServiceError(`the service's database refused a value: ${database.what}`, {
      ...details,
      kind: 'invalid-request',
      ...database.details,
    });
  const what =
    endpoint === 'user-info' && body.code === 10000
      ? 'the session token is not logged in, unknown or expired (code 10000)'
      : `the service refused the request: ${said || `code ${body.code ?? '?'}`}`;
  return new ApprovalServiceError(what, { ...details, kind: 'rejected' });
}

// The service's INSERT names database columns; these are the request fields they hold.
const COLUMN_FIELDS: Record<string, string> = {
  user: 'special_approver',
  submitter: 'user_id',
  cont: 'apply_note',
  name: 'title',
};
const COLUMN_LIMITS: Record<string, number> = { user: 100, submitter: 100, name: 200 };

/** A database error of the start endpoint, mapped to the request field it concerns. */
function databaseProblem(said: string, columnLimits: Record<string, number>) {
  const tooLong = /Data too long for column '(\w+)'/.exec(said);
  const column = tooLong?.[1] ?? /Incorrect string value: .* for column '(\w+)'/.exec(said)?.[1];
  if (column) {
    const field = COLUMN_FIELDS[column] ?? column;
    const limit = columnLimits[column];
    return tooLong
      ? {
          what: `${field} is longer than the service accepts (${limit ?? '?'} characters)`,
          details: { field, problem: 'too-long' as const, ...(limit ? { limit } : {}) },
        }
      : {
          what: `${field} holds a character the service cannot store`,
          details: { field, problem: 'unstorable' as const },
        };
  }
  if (/error in your SQL syntax/.test(said))
    return {
      what: 'a value broke the service’s SQL (a trailing backslash?)',
      details: { problem: 'sql-syntax' as const },
    };
  return undefined;
}

function parse<T>(endpoint: Endpoint, schema: z.ZodType<T>, json: unknown): T {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const where = result.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
    .join('; ');
  throw new ApprovalServiceError(`the answer has an unexpected shape (${where})`, {
    kind: 'protocol',
    endpoint,
  });
}

function toStatus(data: z.infer<typeof statusBody>['data']): ApprovalStatus {
  if (data.data === null) return { ended: false, decision: 'pending', unknown: true };
  const entries = data.data.map((e) => ({
    decision: DECISIONS[e.actionname],
    approver: e.user_id,
  }));
  // The first decision wins in the service; with one approver there is one entry.
  const decided =
    entries.find((e) => e.decision === 'rejected') ??
    entries.find((e) => e.decision === 'approved');
  const decision: Decision = decided?.decision ?? 'pending';
  // The real service sets isend exactly when a decision is made; the interface leaves isend vague,
  // so a decision in the entries counts as the end too.
  const ended = data.isend === 1 || decision !== 'pending';
  const approver = (decided ?? entries[0])?.approver;
  return { ended, decision, unknown: false, ...(approver ? { approver } : {}) };
}

function isFederationProxy(json: unknown): boolean {
  return (
    typeof json === 'object' &&
    json !== null &&
    !('stat' in json) &&
    'code' in json &&
    typeof json.code === 'number' &&
    ('data' in json || 'info' in json)
  );
}

function serviceText(json: unknown, hide: (text: string) => string): string {
  if (typeof json === 'object' && json !== null) {
    const o = json as Record<string, unknown>;
    const said = o.info ?? o.msg ?? o.mesg;
    if (typeof said === 'string') return hide(said).slice(0, 200);
  }
  return 'no message';
}

function describeBody(response: RawAnswer): string {
  const type = response.contentType || 'no content type';
  const start = response.body.slice(0, 60).replace(/\s+/g, ' ');
  return `${type}: "${start}"`;
}
