import { Agent, type Dispatcher, EnvHttpProxyAgent } from 'undici';

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
      const chunks: Buffer[] = [];
      let bytes = 0;
      let status = 0;
      let contentType = '';
      let abort: ((reason: Error) => void) | undefined;
      let timedOut = false;
      // The whole exchange, as axios's timeout: from sending to the last byte of the answer.
      const timer = setTimeout(() => {
        timedOut = true;
        abort?.(coded('ETIMEDOUT'));
      }, timeoutMs);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(coded(timedOut ? 'ETIMEDOUT' : socketCode(error)));
      };
      dispatcher.dispatch(
        { origin, path, method: 'GET', headers },
        {
          onRequestStart(controller) {
            abort = (reason) => controller.abort(reason);
            if (timedOut) controller.abort(coded('ETIMEDOUT'));
          },
          onResponseStart(_controller, statusCode, responseHeaders) {
            status = statusCode;
            const type = responseHeaders['content-type'];
            contentType = Array.isArray(type) ? type.join(', ') : (type ?? '');
          },
          onResponseData(controller, chunk) {
            bytes += chunk.length;
            if (bytes > MAX_ANSWER_BYTES) controller.abort(coded('ERESPONSETOOLARGE'));
            else chunks.push(chunk);
          },
          onResponseEnd() {
            clearTimeout(timer);
            const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
            resolve({ status, contentType, body: body?.toString('utf8') ?? '' });
          },
          onResponseError(_controller, error) {
            fail(error);
          },
        },
      );
    });
}

function dispatcherFor(url: URL, env: NodeJS.ProcessEnv): Dispatcher {
  const proxy =
    url.protocol === 'https:'
      ? (env.HTTPS_PROXY ?? env.https_proxy)
      : (env.HTTP_PROXY ?? env.http_proxy);
  if (!proxy) return new Agent();
  return new EnvHttpProxyAgent({
    httpProxy: proxy,
    httpsProxy: proxy,
    noProxy: env.NO_PROXY ?? env.no_proxy ?? '',
    proxyTunnel: false,
  });
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
