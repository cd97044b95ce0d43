import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type App, type Receiver, verifySlackRequest } from '@slack/bolt';
import { closeServer, listenOn } from '../../http-listen.ts';
import type { Logger } from '../../logger.ts';
import { ACK_DEADLINE_MS, dispatchAcknowledged } from './acknowledged-dispatch.ts';
import { isSslCheckProbe, parseSlackRequest } from './slack-request.ts';

export interface Route {
  path: string;
  method: string;
  handler(req: IncomingMessage, res: ServerResponse): void;
}

export interface SlackHttpReceiverOptions {
  signingSecret: string;
  logger: Logger;
  /** Other routes on the same port (/healthz, …). */
  routes?: Route[];
  /**
   * A request no listener acknowledged by then is answered 200 (Slack shows an error after 3 s,
   * and retries events it thinks were lost).
   */
  ackDeadlineMs?: number;
  path?: string;
}

// Slack's payloads are far smaller; anything bigger is not from Slack.
const BODY_LIMIT = 1 << 20;
// The most an unsigned body is read: the ssl_check probe is a few dozen bytes (isSslCheckProbe).
const SSL_CHECK_LIMIT = 512;
// How far past its limit a body is still read (and dropped) so that its sender gets the refusal:
// up to 16 MiB signed, 8 KiB unsigned; a sender past that gets its connection cut.
const DRAIN_FACTOR = 16;

/** Whether an unsigned request's headers leave room for the ssl_check probe: a short form. */
function couldBeSslCheck(req: IncomingMessage, contentType: string): boolean {
  if (!contentType.startsWith('application/x-www-form-urlencoded')) return false;
  const length = req.headers['content-length'];
  return length === undefined || Number(length) <= SSL_CHECK_LIMIT;
}

/**
 * The HTTP side of Bolt's Receiver seam. Bolt's own HTTPReceiver is not used, for two reasons it
 * has no option for: it verifies the signature before anything else, so Slack's unsigned
 * `ssl_check` probe gets 401 (bolt-js #1397); and it hands any verified body to App.processEvent,
 * which throws on shapes Slack never sends (`event: null`, `actions: null`) before our middleware
 * or listeners could refuse them. So here, in this order:
 * - an unsigned request that cannot be the `ssl_check` probe (not a form, or over 512 bytes) is
 *   answered 401 before its body is read;
 * - the exact unsigned `ssl_check` probe is answered 200, nothing in it read or logged;
 * - a body past its limit (1 MiB signed, 512 bytes unsigned) is read to its end and dropped, then
 *   answered 413 (or 401) and its connection closed (readBody);
 * - everything else is verified (signature and age, with Bolt's verifySlackRequest): 401;
 * - the body is parsed and checked against what the listeners read (400, one line at warn);
 *   url_verification and signed probes are answered here;
 * - the rest goes to Bolt, and Slack gets exactly one answer (dispatchAcknowledged, shared with
 *   Socket Mode): the listener's ack, or 200 once the listeners are done, or 200 at 2.5 s.
 * Routes beside /slack/events (the probes, unless ADMIN_PORT moves them) are answered first.
 */
export class SlackHttpReceiver implements Receiver {
  private app: App | undefined;
  private server: Server | undefined;
  private readonly ackDeadlineMs: number;
  private readonly path: string;

  constructor(private readonly options: SlackHttpReceiverOptions) {
    this.ackDeadlineMs = options.ackDeadlineMs ?? ACK_DEADLINE_MS;
    this.path = options.path ?? '/slack/events';
  }

  init(app: App): void {
    this.app = app;
  }

  /** Listens on `port`, on every interface unless `host` names one (the sandbox: 127.0.0.1). */
  async start(listen: number | { port: number; host?: string }): Promise<Server> {
    const { port, host } = typeof listen === 'number' ? { port: listen, host: undefined } : listen;
    const server = createServer((req, res) => {
      this.route(req, res).catch((error: unknown) => {
        this.options.logger.error({ err: error }, 'request handling failed');
        if (!res.headersSent) res.writeHead(500).end();
      });
    });
    this.server = server;
    return listenOn(server, port, host);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server) await closeServer(server);
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const custom = this.options.routes?.find((r) => r.path === path && r.method === req.method);
    if (custom) return custom.handler(req, res);
    if (path !== this.path) return void res.writeHead(404).end();
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const contentType = String(req.headers['content-type'] ?? '');
    const signed =
      req.headers['x-slack-signature'] !== undefined ||
      req.headers['x-slack-request-timestamp'] !== undefined;
    // Unsigned, it can only be the ssl_check probe (a short form): anything that cannot be one is
    // refused before its body is read, so unsigned requests cost no more than that.
    if (!signed && !couldBeSslCheck(req, contentType))
      return this.refuse(res, 401, 'signature refused: no signature headers');
    const raw = await readBody(req, signed ? BODY_LIMIT : SSL_CHECK_LIMIT);
    if (raw === undefined)
      return signed
        ? this.refuse(res, 413, 'the body is larger than 1 MiB', { connection: 'close' })
        : this.refuse(res, 401, 'signature refused: no signature headers', { connection: 'close' });
    if (!signed && isSslCheckProbe(raw, contentType)) {
      this.options.logger.debug('ssl_check answered');
      return send(res, 200);
    }
    try {
      verifySlackRequest({
        signingSecret: this.options.signingSecret,
        body: raw,
        headers: {
          'x-slack-signature': String(req.headers['x-slack-signature'] ?? ''),
          'x-slack-request-timestamp': Number(req.headers['x-slack-request-timestamp']),
        },
      });
    } catch (error) {
      return this.refuse(res, 401, `signature refused: ${(error as Error).message}`);
    }
    const parsed = parseSlackRequest(raw, contentType);
    switch (parsed.kind) {
      case 'refuse':
        return this.refuse(res, 400, parsed.reason);
      case 'answer':
        if (parsed.note) this.options.logger.info({ note: parsed.note }, 'slack request ignored');
        return send(res, parsed.status, parsed.body);
      case 'dispatch': {
        const app = this.app;
        if (!app) return void res.writeHead(503).end();
        const retryNum = Number(req.headers['x-slack-retry-num']);
        const retryReason = req.headers['x-slack-retry-reason'];
        return dispatchAcknowledged(
          app,
          {
            body: parsed.body,
            ...(Number.isFinite(retryNum) ? { retryNum } : {}),
            ...(typeof retryReason === 'string' ? { retryReason } : {}),
            acknowledge: (response) => send(res, 200, response),
          },
          { logger: this.options.logger, deadlineMs: this.ackDeadlineMs },
        );
      }
    }
  }

  private refuse(
    res: ServerResponse,
    status: number,
    reason: string,
    headers: Record<string, string> = {},
  ): void {
    this.options.logger.warn({ status, reason }, 'slack request refused');
    send(res, status, undefined, headers);
  }
}

function send(
  res: ServerResponse,
  status: number,
  payload?: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  if (payload === undefined || payload === '') return void res.writeHead(status, headers).end();
  if (typeof payload === 'string')
    return void res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(payload);
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    .end(JSON.stringify(payload));
}

/**
 * The body as text, or undefined past `limit` bytes. A body past the limit is still read to its
 * end, and dropped, before the caller answers and closes: leaving the request's iterator early
 * destroys it, and a socket closed with the sender's bytes unread is reset, so a sender still
 * writing saw EPIPE or ECONNRESET instead of the 413. Only a body past DRAIN_FACTOR times the limit
 * is cut off there, unanswered.
 */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  let chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    else if (size > limit * DRAIN_FACTOR) break;
    else chunks = [];
  }
  return size > limit ? undefined : Buffer.concat(chunks).toString('utf8');
}
