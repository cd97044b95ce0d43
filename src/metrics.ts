import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the store can count at scrape time. */
export interface MetricsSource {
  announcementCounts(): Promise<Array<{ state: string; kind: string; count: number }>>;
  dueCount(now: Date): Promise<number>;
  /** Whether delivery is paused fleet-wide (Slack refuses the app's token). */
  deliveryPaused(): Promise<boolean>;
}

/**
 * The app's Prometheus metrics, on a registry of its own (several apps can live in one process,
 * as in the tests). Names are documented in README ("Metrics").
 */
export function createMetrics(source: MetricsSource, now: () => Date = () => new Date()) {
  const registry = new Registry();
  const prefix = 'slack_approvals_';
  new Gauge({
    name: `${prefix}announcements`,
    help: 'Announcements in the outbox, by state and kind',
    labelNames: ['state', 'kind'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await source.announcementCounts())
        this.set({ state: row.state, kind: row.kind }, row.count);
    },
  });
  new Gauge({
    name: `${prefix}due_backlog`,
    help: 'Followed approvals whose next status check is due',
    registers: [registry],
    async collect() {
      this.set(await source.dueCount(now()));
    },
  });
  new Gauge({
    name: `${prefix}delivery_paused`,
    help: 'Whether delivery is paused fleet-wide because Slack refuses the app’s token (1) or runs (0)',
    registers: [registry],
    async collect() {
      this.set((await source.deliveryPaused()) ? 1 : 0);
    },
  });
  const attempts = new Counter({
    name: `${prefix}delivery_attempts_total`,
    help: 'Delivery attempts of announcements, by kind and outcome',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  });
  const attemptSeconds = new Histogram({
    name: `${prefix}delivery_attempt_seconds`,
    help: 'How long one delivery attempt took',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const failed = new Counter({
    name: `${prefix}announcements_failed_total`,
    help: 'Announcements that failed for good (re-drive with npm run announcements)',
    labelNames: ['kind'],
    registers: [registry],
  });
  const passes = new Counter({
    name: `${prefix}poll_passes_total`,
    help: 'Poll passes run',
    registers: [registry],
  });
  const passSeconds = new Histogram({
    name: `${prefix}poll_pass_seconds`,
    help: 'How long one poll pass took',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60],
    registers: [registry],
  });
  const serviceCalls = new Counter({
    name: `${prefix}service_calls_total`,
    help: 'Calls to the approval service, by endpoint and outcome (ok or the error kind)',
    labelNames: ['endpoint', 'outcome'],
    registers: [registry],
  });
  const serviceSeconds = new Histogram({
    name: `${prefix}service_call_seconds`,
    help: 'Latency of calls to the approval service',
    labelNames: ['endpoint'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const slackErrors = new Counter({
    name: `${prefix}slack_api_errors_total`,
    help: 'Failed Slack Web API calls of the background delivery, by method and code',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  return {
    registry,
    delivery(kind: string, outcome: string, ms: number): void {
      attempts.inc({ kind, outcome });
      attemptSeconds.observe(ms / 1000);
      if (outcome === 'failed') failed.inc({ kind });
    },
    pollPass(ms: number): void {
      passes.inc();
      passSeconds.observe(ms / 1000);
    },
    serviceCall(endpoint: string, outcome: string, ms: number): void {
      serviceCalls.inc({ endpoint, outcome });
      serviceSeconds.observe({ endpoint }, ms / 1000);
    },
    slackError(method: string, code: string): void {
      slackErrors.inc({ method, code });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
