import { type Dispatcher, EnvHttpProxyAgent, Pool } from 'undici';

/**
 * The most of an answer read, in bytes: a status answer is a few hundred. Past this the request is
 * dropped, since a body without end (a proxy's error page gone wrong, a hostile service) would
 * otherwise grow until the process runs out of memory, at every sweep.
 */
export const MAX_ANSWER_BYTES = 1_000_000;

/** An answer as the client judges it: status, content type and the body as text. */
export interface RawAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** A GET to the service's origin: a path with its query, the headers, the whole-exchange timeout. */
export type KeepAliveGet = (
  pathAndQuery: string,
  headers: Record<string, string>,
  timeoutMs: number,
) => Promise<RawAnswer>;

/**
 * GETs to one origin on kept-alive connections, through undici's dispatcher: the status check is
 * made for every open approval at every sweep, and Node's http client (ClientRequest, the agent's
 * bookkeeping, IncomingMessage streams) cost about twice undici's CPU per call, axios's pipeline
 * twice that again (bench/README). Fails like a socket does, with an error whose `code` is the
 * socket's (ECONNREFUSED, ECONNRESET, …; ETIMEDOUT when no whole answer came within the timeout),
 * never with the request's headers (they hold the app key); ERESPONSETOOLARGE past
 * MAX_ANSWER_BYTES. No redirects are followed, as with the other calls.
 *
 * The proxy is chosen as Node's agents choose it for the other calls (HTTP_PROXY for an http
 * service, HTTPS_PROXY for an https one, NO_PROXY's exceptions), and a plain http proxy is sent
 * the absolute URL, as axios sends it, rather than asked for a tunnel.
 */
export function keepAliveGets(origin: string, proxyEnv: NodeJS.ProcessEnv): KeepAliveGet {
  const dispatcher = dispatcherFor(new URL(origin), proxyEnv);
  return (path, headers, timeoutMs) =>
    new Promise((resolve, reject) => {
      dispatcher.dispatch(
        { origin, path, method: 'GET', headers },
        new AnswerReader(timeoutMs, resolve, reject),
      );
    });
}

/**
 * Reads one answer: status, content type, the body up to MAX_ANSWER_BYTES, within the timeout.
 * One object per request, its callbacks on the prototype: a sweep makes one for every check.
 */
class AnswerReader implements Dispatcher.DispatchHandler {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private status = 0;
  private contentType = '';
  private controller: Dispatcher.DispatchController | undefined;
  private timedOut = false;
  // The whole exchange, as axios's timeout: from sending to the last byte of the answer.
  private readonly timer: NodeJS.Timeout;

  constructor(
    timeoutMs: number,
    private readonly resolve: (answer: RawAnswer) => void,
    private readonly reject: (error: Error) => void,
  ) {
    // Rejects at once, also while undici is still connecting (its controller comes only once
    // the request is on a socket): the connection is dropped when it comes, or fails on its own.
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller?.abort(coded('ETIMEDOUT'));
      this.reject(coded('ETIMEDOUT'));
    }, timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut) controller.abort(coded('ETIMEDOUT'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.status = statusCode;
    const type = headers['content-type'];
    this.contentType = Array.isArray(type) ? type.join(', ') : (type ?? '');
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > MAX_ANSWER_BYTES) controller.abort(coded('ERESPONSETOOLARGE'));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    clearTimeout(this.timer);
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    this.resolve({
      status: this.status,
      contentType: this.contentType,
      body: body?.toString('utf8') ?? '',
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    clearTimeout(this.timer);
    this.reject(coded(this.timedOut ? 'ETIMEDOUT' : socketCode(error)));
  }
}

function dispatcherFor(url: URL, env: NodeJS.ProcessEnv): Dispatcher {
  const proxy = envValue(env, url.protocol === 'https:' ? 'https_proxy' : 'http_proxy');
  // One origin: its own pool of connections, without an agent's lookup by origin per call.
  if (!proxy) return new Pool(url.origin);
  return new EnvHttpProxyAgent({
    httpProxy: proxy,
    httpsProxy: proxy,
    noProxy: envValue(env, 'no_proxy') ?? '',
    proxyTunnel: false,
  });
}

/** A proxy variable as Node's agents read it: the lower-case name first; empty is unset. */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return env[name] || env[name.toUpperCase()] || undefined;
}

/** undici's own error codes, as the socket's code the client reports (and retries) on. */
const UNDICI_CODES: Record<string, string> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_HEADERS_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_BODY_TIMEOUT: 'ETIMEDOUT',
};

function socketCode(error: Error & { code?: string }): string {
  const code = error.code ?? 'unknown';
  return UNDICI_CODES[code] ?? code;
}

/** A fresh error with the code alone: undici's may quote the request, and its headers hold keys. */
function coded(code: string): Error & { code: string } {
  return Object.assign(new Error(code), { code });
}
