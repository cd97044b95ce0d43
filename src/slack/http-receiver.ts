import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type App, type Receiver, verifySlackRequest } from '@slack/bolt';
import { withLogContext } from '../log-context.ts';
import type { Logger } from '../logger.ts';
import { parseSlackRequest, requestId, requestKind } from './slack-request.ts';

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
const FALLBACK_TEXT = 'Something went wrong on our side; please try again.';

/**
 * Bolt's HTTP receiver, rebuilt to answer every request whatever its shape: the signature is
 * verified first (401), the body parsed and checked against what the listeners read (400 with one
 * line at warn), Slack's probes answered here, and a request no listener acknowledges is answered
 * 200 rather than left to time out. A listener that throws before acknowledging is a bug: logged
 * with its stack, and the person gets a short apology instead of Slack's timeout.
 */
export class SlackHttpReceiver implements Receiver {
  private app: App | undefined;
  private server: Server | undefined;
  private readonly ackDeadlineMs: number;
  private readonly path: string;

  constructor(private readonly options: SlackHttpReceiverOptions) {
    this.ackDeadlineMs = options.ackDeadlineMs ?? 2500;
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
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const custom = this.options.routes?.find((r) => r.path === path && r.method === req.method);
    if (custom) return custom.handler(req, res);
    if (path !== this.path) return void res.writeHead(404).end();
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const raw = await readBody(req, BODY_LIMIT);
    if (raw === undefined) return this.refuse(res, 413, 'the body is larger than 1 MiB');
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
    const parsed = parseSlackRequest(raw, String(req.headers['content-type'] ?? ''));
    switch (parsed.kind) {
      case 'refuse':
        return this.refuse(res, 400, parsed.reason);
      case 'answer':
        if (parsed.note) this.options.logger.info({ note: parsed.note }, 'slack request ignored');
        return send(res, parsed.status, parsed.body);
      case 'dispatch': {
        // The receiver's own lines (late ack, a failed listener) carry the request id too.
        const id = requestId(parsed.body);
        return withLogContext(id ? { requestId: id } : {}, () =>
          this.dispatch(req, res, parsed.body),
        );
      }
    }
  }

  private async dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
  ): Promise<void> {
    let answered = false;
    const answer = (status: number, payload?: unknown) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      send(res, status, payload);
    };
    const timer = setTimeout(() => {
      if (answered) return;
      this.options.logger.warn(
        { kind: requestKind(body), ms: this.ackDeadlineMs },
        'no listener acknowledged in time; answered 200',
      );
      answer(200);
    }, this.ackDeadlineMs);
    const retryNum = Number(req.headers['x-slack-retry-num']);
    const retryReason = req.headers['x-slack-retry-reason'];
    try {
      await this.app?.processEvent({
        body,
        ...(Number.isFinite(retryNum) ? { retryNum } : {}),
        ...(typeof retryReason === 'string' ? { retryReason } : {}),
        ack: async (response?: unknown) => {
          if (answered) throw new Error('this request was already acknowledged');
          answer(200, response);
        },
      });
      // Nobody took it (no listener for this action or callback): Slack still wants its 200.
      answer(200);
    } catch (error) {
      if (!answered) {
        this.options.logger.error(
          { err: error, kind: requestKind(body) },
          'a listener failed before acknowledging',
        );
        answer(200, 'command' in body ? { text: FALLBACK_TEXT } : undefined);
      } else {
        this.options.logger.error({ err: error, kind: requestKind(body) }, 'a listener failed');
      }
    }
  }

  private refuse(res: ServerResponse, status: number, reason: string): void {
    this.options.logger.warn({ status, reason }, 'slack request refused');
    send(res, status);
  }
}

function send(res: ServerResponse, status: number, payload?: unknown): void {
  if (res.headersSent) return;
  if (payload === undefined || payload === '') return void res.writeHead(status).end();
  if (typeof payload === 'string')
    return void res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(payload);
  res
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    .end(JSON.stringify(payload));
}

/** The body as text, or undefined past `limit` bytes. */
async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
