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
  /** Where the app is in its life: liveness holds while it serves and while it stops. */
  phase: () => 'starting' | 'serving' | 'stopping';
}

// The service counts as reachable while it answered within this long.
export const SERVICE_FRESH_MS = 60_000;

/**
 * The HTTP probes, on the app's own port:
 * - `GET /healthz` (liveness): the process serves. Nothing outside it counts, so a database or
 *   service outage never gets the process restarted.
 * - `GET /readyz` (readiness): this replica can serve Slack: the database answers and Socket Mode
 *   (when used) is connected. The approval service is not part of it: while it is down every
 *   replica still opens forms (saying so), serves App Home and help, and delivers the outbox, and
 *   a load balancer that took all replicas out would leave Slack with no answer at all. Its state
 *   is in the body, in a metric and in the log instead.
 * - `GET /metrics`: Prometheus text format.
 */
export function createProbes(deps: ProbeDeps) {
  const json = (res: ServerResponse, status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  return {
    healthz(res: ServerResponse): void {
      if (deps.phase() !== 'starting') json(res, 200, { ok: true });
      else json(res, 503, { ok: false, starting: true });
    },
    async readyz(res: ServerResponse): Promise<void> {
      const problems: Record<string, string> = {};
      if (deps.phase() !== 'serving') problems.app = deps.phase();
      await sql`select 1`.execute(deps.db).catch(() => {
        problems.database = 'unreachable';
      });
      if (deps.socketConnected && !deps.socketConnected()) problems.socketMode = 'disconnected';
      const last = deps.lastServiceOk();
      const approvalService =
        last !== undefined && Date.now() - last <= SERVICE_FRESH_MS
          ? 'answering'
          : 'no answer with accepted credentials in the last minute';
      if (Object.keys(problems).length > 0)
        return json(res, 503, { ok: false, ...problems, approvalService });
      json(res, 200, { ok: true, approvalService });
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
