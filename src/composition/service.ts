import { createApprovalServiceClient } from '../approval-service/approval-service-client.ts';
import { ApprovalServiceError } from '../approval-service/approval-service-error.ts';
import { observeService } from '../approval-service/observed-service.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import type { Config } from '../config.ts';
import { AppError, describe } from '../errors.ts';
import type { Stoppable } from '../lifecycle.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { SERVICE_FRESH_MS } from '../probes.ts';

/** When the approval service last answered well, and one log line each time that changes. */
export function createServiceHealth(logger: Logger) {
  let lastOk: number | undefined;
  const state = serviceStateLog(logger);
  return {
    lastOk: () => lastOk,
    /** Fresh enough for /readyz and the service_up metric. */
    up: () => lastOk !== undefined && Date.now() - lastOk <= SERVICE_FRESH_MS,
    saw(outcome: string): void {
      if (outcome === 'ok') lastOk = Date.now();
      state.saw(outcome);
    },
  };
}

export type ServiceHealth = ReturnType<typeof createServiceHealth>;

/** The approval service's client (or the override), each call measured and watched. */
export function createObservedService(
  config: Config,
  override: ApprovalService | undefined,
  metrics: Metrics,
  health: ServiceHealth,
): ApprovalService {
  return observeService(
    override ??
      createApprovalServiceClient({
        baseUrl: config.approval.baseUrl ?? '',
        appName: config.approval.appName,
        appKey: config.approval.appKey,
        timeoutMs: config.approval.timeoutMs,
        noteLimit: config.approval.noteLimit,
        proxyEnv: config.approval.proxyEnv,
      }),
    (endpoint, outcome, ms) => {
      metrics.serviceCall(endpoint, outcome, ms);
      health.saw(outcome);
    },
  );
}

/**
 * Keeps the service's state fresh for /readyz's body and the service_up metric: asks it when
 * nothing else did for half a minute.
 */
export function reprobeService(
  service: ApprovalService,
  logger: Logger,
  lastServiceOk: () => number | undefined,
): Stoppable {
  const timer = setInterval(() => {
    const last = lastServiceOk();
    if (last === undefined || Date.now() - last > SERVICE_FRESH_MS / 2)
      void probeService(service, logger).catch(() => undefined);
  }, SERVICE_FRESH_MS / 4);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
    },
  };
}

// A number the service accepts and has never issued: it answers `data: null`.
const PROBE_DJBH = 'readiness-probe';

/**
 * Asks the service once: refused credentials stop the start with a message naming the settings;
 * an unreachable service is a warning (the app starts and serves, and keeps asking).
 */
export async function probeService(service: ApprovalService, logger: Logger): Promise<void> {
  try {
    await service.getStatus(PROBE_DJBH);
  } catch (error) {
    if (error instanceof ApprovalServiceError && error.kind === 'credentials')
      throw new AppError(
        'service_credentials',
        'The approval service refused APPROVAL_APP_NAME / APPROVAL_APP_KEY (key err); check both',
      );
    logger.warn(
      { error: describe(error) },
      'the approval service did not answer; starting anyway (forms will say it is down)',
    );
  }
}

/**
 * One log line when the approval service stops answering (unreachable, or our credentials
 * refused) and one when it answers again: not a line per failed call, and not readiness.
 */
function serviceStateLog(logger: Logger) {
  let answering: boolean | undefined;
  return {
    saw(outcome: string): void {
      const down = outcome === 'unavailable' || outcome === 'credentials';
      if (outcome !== 'ok' && !down) return;
      if (answering === !down) return;
      const first = answering === undefined;
      answering = !down;
      if (down)
        logger.warn(
          { outcome },
          'the approval service is not answering; forms say so and checks back off',
        );
      else if (!first) logger.info('the approval service answers again');
    },
  };
}
