import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Phase } from '../lifecycle.ts';
import type { Liveness } from '../liveness.ts';
import type { Metrics } from '../metrics.ts';
import { createProbes } from '../probes.ts';
import type { Route } from '../slack/receivers/http-receiver.ts';
import type { DatabaseHandle } from '../store/database.ts';

export interface AdminRoutes {
  /** What the admin listener serves. */
  admin: Route[];
  /** What PORT serves beside Slack's endpoint. */
  slackPort: Route[];
}

/**
 * The probes and /metrics as routes: the admin listener serves them all; PORT (what Slack, or
 * the load balancer in front, reaches) keeps the probes only while there is no admin listener
 * to take them, and never serves /metrics.
 */
export function createAdminRoutes(
  config: Config,
  deps: {
    database: DatabaseHandle;
    metrics: Metrics;
    lastServiceOk: () => number | undefined;
    socketConnected: () => boolean;
    phase: () => Phase;
    liveness: Liveness;
  },
): AdminRoutes {
  const probes = createProbes({
    db: deps.database.db as unknown as Kysely<never>,
    registry: deps.metrics.registry,
    lastServiceOk: deps.lastServiceOk,
    socketConnected: deps.socketConnected,
    phase: deps.phase,
    liveness: deps.liveness,
  });
  const probeRoutes: Route[] = [
    { path: '/healthz', method: 'GET', handler: (_req, res) => probes.healthz(res) },
    { path: '/readyz', method: 'GET', handler: (_req, res) => void probes.readyz(res) },
  ];
  const admin: Route[] = [
    ...probeRoutes,
    { path: '/metrics', method: 'GET', handler: (_req, res) => void probes.metrics(res) },
  ];
  return { admin, slackPort: config.admin ? [] : probeRoutes };
}
