import type { ServerResponse } from 'node:http';
import { type Kysely, sql } from 'kysely';
import type { Registry } from 'prom-client';
import type { Liveness } from './liveness.ts';
import { settleWithin } from './settle-within.ts';

export interface ProbeDeps {
  db: Kysely<never>;
  registry: Registry;
  /** When the approval service last answered a call with our credentials accepted. */
  lastServiceOk: () => number | undefined;
  /** Socket Mode only: whether the connection is up. */
  socketConnected?: () => boolean;
  /** Where the app is in its life: liveness holds while it serves and while it stops. */
  phase: () => 'starting' | 'serving' | 'stopping';
  /** The background loops: one stuck past its limit fails liveness. */
  liveness?: Liveness;
}

// The service counts as reachable while it answered within this long.
export const SERVICE_FRESH_MS = 60_000;
/**
 * Readiness waits this long for its `select 1` (Kubernetes gives a probe 1 s). A check still
 * running then (a saturated pool, a slow moment of the database) is answered by the last one
 * that finished, if that one succeeded within DATABASE_FRESH_MS: one slow query must not take
 * every replica out of service at once. A check that fails is a 503 at once.
 */
export const DATABASE_WAIT_MS = 500;
export const DATABASE_FRESH_MS = 30_000;

/**
 * The HTTP probes, on the app's own port:
 * - `GET /healthz` (liveness): the process serves, and no background loop is stuck: the outbox's
 *   delivery has had an answer from the database within LIVENESS_STALL_SECONDS (liveness.ts). A
 *   short database or service outage never gets the process restarted; a loop stuck longer does.
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
  const database = databaseCheck(deps.db);
  return {
    healthz(res: ServerResponse): void {
      if (deps.phase() === 'starting') {
        json(res, 503, { ok: false, starting: true });
        return;
      }
      const stuck = deps.phase() === 'serving' ? (deps.liveness?.stuck() ?? []) : [];
      if (stuck.length === 0) json(res, 200, { ok: true });
      else
        json(res, 503, {
          ok: false,
          stuck: Object.fromEntries(stuck.map((s) => [s.loop, `${Math.round(s.ms / 1000)} s`])),
        });
    },
    async readyz(res: ServerResponse): Promise<void> {
      const problems: Record<string, string> = {};
      if (deps.phase() !== 'serving') problems.app = deps.phase();
      const reached = await database.reachable();
      if (reached !== 'yes') problems.database = reached;
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

/**
 * Readiness' `select 1`: one at a time (probes that come while one runs share it), answered
 * within DATABASE_WAIT_MS, from the last finished check when it takes longer.
 */
function databaseCheck(db: Kysely<never>) {
  let lastOk: number | undefined;
  let lastFailed = false;
  let checking: Promise<void> | undefined;
  const check = () =>
    sql`select 1`.execute(db).then(
      () => {
        lastOk = Date.now();
        lastFailed = false;
      },
      () => {
        lastFailed = true;
      },
    );
  return {
    async reachable(): Promise<'yes' | 'unreachable' | 'slow'> {
      const started = Date.now();
      checking ??= check().finally(() => {
        checking = undefined;
      });
      const finished = await settleWithin(
        checking.then(() => true),
        DATABASE_WAIT_MS,
      );
      if (finished) return lastFailed ? 'unreachable' : 'yes';
      if (lastFailed) return 'unreachable';
      return lastOk !== undefined && started - lastOk <= DATABASE_FRESH_MS ? 'yes' : 'slow';
    },
  };
}
