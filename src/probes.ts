import type { ServerResponse } from 'node:http';
import { type Kysely, sql } from 'kysely';
import type { Registry } from 'prom-client';

export interface ProbeDeps {
  db: Kysely<never>;
  registry: Registry;
  /** When the approval service last answered a call with our credentials accepted. */
  lastServiceOk: () => number | undefined;
  /** Socket Mode only: whether the connection is up. */
  socketConnected?: () => boolean;
  /** Set once the app serves. */
  serving: () => boolean;
}

// The service counts as reachable while it answered within this long.
export const SERVICE_FRESH_MS = 60_000;

/**
 * The HTTP probes, on the app's own port:
 * - `GET /healthz` (liveness): the process serves. Nothing outside it counts, so a database or
 *   service outage never gets the process restarted.
 * - `GET /readyz` (readiness): the database answers, the approval service answered with our
 *   credentials within the last minute, and Socket Mode (when used) is connected.
 * - `GET /metrics`: Prometheus text format.
 */
export function createProbes(deps: ProbeDeps) {
  const json = (res: ServerResponse, status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  return {
    healthz(res: ServerResponse): void {
      if (deps.serving()) json(res, 200, { ok: true });
      else json(res, 503, { ok: false, starting: true });
    },
    async readyz(res: ServerResponse): Promise<void> {
      const problems: Record<string, string> = {};
      if (!deps.serving()) problems.app = 'starting';
      await sql`select 1`.execute(deps.db).catch(() => {
        problems.database = 'unreachable';
      });
      const last = deps.lastServiceOk();
      if (last === undefined || Date.now() - last > SERVICE_FRESH_MS)
        problems.approvalService = 'no answer with accepted credentials in the last minute';
      if (deps.socketConnected && !deps.socketConnected()) problems.socketMode = 'disconnected';
      if (Object.keys(problems).length > 0) return json(res, 503, { ok: false, ...problems });
      json(res, 200, { ok: true });
    },
    async metrics(res: ServerResponse): Promise<void> {
      try {
        const text = await deps.registry.metrics();
        res.writeHead(200, { 'content-type': deps.registry.contentType });
        res.end(text);
      } catch (error) {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end(`metrics unavailable: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}
