import { type Agent as HttpAgent, request as httpRequest } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * The most of an answer read, in characters: a status answer is a few hundred bytes. Past this the
 * connection is dropped, since a body without end (a proxy's error page gone wrong, a hostile
 * service) would otherwise grow one string until V8 refuses it (about 512 MB), and that throws
 * out of the stream's listener: the process dies, at every sweep.
 */
export const MAX_ANSWER_CHARS = 1_000_000;

/** An answer as the client judges it: status, content type and the body as text. */
export interface RawAnswer {
  status: number;
  contentType: string;
  body: string;
}

/**
 * A GET on a kept-alive connection, straight through Node's http: the status check is made for
 * every open approval at every sweep, and axios's per-request pipeline (config merging, header
 * objects, interceptors, its adapter) measured about 200 µs of CPU per call, most of what a check
 * may cost (bench/README). Fails like a socket does, with the error's `code` (ECONNREFUSED,
 * ECONNRESET, …; ETIMEDOUT when no answer came within `timeoutMs`), never with the request's
 * headers (they hold the app key); ERESPONSETOOLARGE past MAX_ANSWER_CHARS. No redirects are
 * followed, as with the other calls.
 */
export function keepAliveGet(
  url: URL,
  headers: Record<string, string>,
  options: { timeoutMs: number; agents: { http: HttpAgent; https: HttpsAgent } },
): Promise<RawAnswer> {
  const https = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const request = (https ? httpsRequest : httpRequest)(
      url,
      { method: 'GET', headers, agent: https ? options.agents.https : options.agents.http },
      (response) => {
        response.setEncoding('utf8');
        let body = '';
        response.on('data', (chunk: string) => {
          body += chunk;
          if (body.length > MAX_ANSWER_CHARS)
            request.destroy(
              Object.assign(new Error('answer too large'), { code: 'ERESPONSETOOLARGE' }),
            );
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers['content-type'] ?? ''),
            body,
          }),
        );
        response.on('error', (error) => reject(codeOnly(error)));
      },
    );
    // The whole exchange, as axios's timeout: from sending to the last byte of the answer.
    const timer = setTimeout(
      () => request.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })),
      options.timeoutMs,
    );
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error) => reject(codeOnly(error)));
    request.end();
  });
}

function codeOnly(error: Error & { code?: string }): Error & { code: string } {
  return Object.assign(new Error(error.code ?? 'unknown'), { code: error.code ?? 'unknown' });
}
