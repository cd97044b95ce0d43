import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../simulator/http-replies.ts';
import type { Workspace } from './workspace.ts';

/** What goes back over HTTP for one Web API call. */
export interface HttpAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/**
 * Stands between a Web API call and its answer, as Slack's servers do on a bad day: answer 429
 * with Retry-After instead of doing it, do it and then answer 5xx, or take longer than any client
 * waits. `answer` carries the call out on the workspace.
 */
export type WebApiInterceptor = (
  call: { method: string; args: Record<string, unknown> },
  answer: () => Promise<Record<string, unknown>>,
) => Promise<HttpAnswer>;

/**
 * Serves a Workspace as Slack's Web API (`POST /api/<method>`, form or JSON bodies, bearer token),
 * so the app's real WebClient talks to it through SLACK_API_URL.
 */
async function handleWebApi(
  workspace: Workspace,
  method: string,
  req: IncomingMessage,
  res: ServerResponse,
  intercept?: WebApiInterceptor,
): Promise<void> {
  const raw = await readBody(req);
  const type = String(req.headers['content-type'] ?? '');
  const args: Record<string, unknown> = type.startsWith('application/json')
    ? (JSON.parse(raw || '{}') as Record<string, unknown>)
    : Object.fromEntries(new URLSearchParams(raw));
  const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? args.token;
  delete args.token;
  // apps.connections.open takes the app-level token; every other method the bot token, or a
  // running workflow step's own token.
  const auth = workspace.authenticate(method, bearer);
  if (!auth) {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    // A workflow step's token stops working once the step has ended (or after its lifetime).
    const error = !bearer
      ? 'not_authed'
      : String(bearer).startsWith('xwfp-')
        ? 'token_revoked'
        : 'invalid_auth';
    res.end(JSON.stringify({ ok: false, error }));
    return;
  }
  const answer = () => workspace.call(method, args, auth === 'app' ? undefined : auth);
  const reply: HttpAnswer = intercept
    ? await intercept({ method, args }, answer)
    : { status: 200, body: await answer() };
  if (res.destroyed) return;
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    // As Slack does on every answer to a bot token: what it was granted.
    ...(workspace.grantedScopes ? { 'x-oauth-scopes': workspace.grantedScopes.join(',') } : {}),
    ...reply.headers,
  });
  res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
}

export interface WebApiServer {
  /** The value for SLACK_API_URL (ends with /api/). */
  apiUrl: string;
  /** Where command response_urls point (the server's own origin). */
  origin: string;
  close(): Promise<void>;
}

/** `POST /respond/<user>/<channel>`: the response_url the stand-in hands out with each command. */
async function handleResponseUrl(
  workspace: Workspace,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const match = /^\/respond\/(\w+)\/(\w+)$/.exec(path);
  if (req.method !== 'POST' || !match) return false;
  const body = JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>;
  try {
    workspace.respond(match[1] ?? '', match[2] ?? '', body);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  } catch (error) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
  }
  return true;
}

/**
 * Answers what Slack's servers answer: `POST /api/<method>` and the command response_urls.
 * False when the request is for neither, so a caller can route it elsewhere.
 */
export async function routeSlackSide(
  workspace: Workspace,
  req: IncomingMessage,
  res: ServerResponse,
  intercept?: WebApiInterceptor,
): Promise<boolean> {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path.startsWith('/respond/')) return handleResponseUrl(workspace, path, req, res);
  const method = /^\/api\/([\w.]+)$/.exec(path)?.[1];
  if (req.method !== 'POST' || !method) return false;
  try {
    await handleWebApi(workspace, method, req, res, intercept);
  } catch (error) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: false, error: 'internal_error', detail: String(error) }));
  }
  return true;
}

export async function startWebApiServer(
  workspace: Workspace,
  port = 0,
  intercept?: WebApiInterceptor,
): Promise<WebApiServer> {
  const server: Server = createServer((req, res) => {
    void routeSlackSide(workspace, req, res, intercept).then((handled) => {
      if (!handled) res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: actual } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${actual}/api/`,
    origin: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
