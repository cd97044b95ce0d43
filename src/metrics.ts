import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ANNOUNCEMENT_KINDS } from './approvals/announcement-rules.ts';
import { AGE_BANDS, type AgeBand, ENTRY_POINTS } from './approvals/approval-report.ts';
import { settleWithin } from './settle-within.ts';
import type { PoolStats } from './store/database.ts';

/** How long a scrape waits for each of its database reads (Prometheus gives a scrape 10 s). */
const DATABASE_READ_MS = 1500;

/** What the store can count at scrape time. */
export interface MetricsSource {
  announcementCounts(): Promise<Array<{ state: string; kind: string; count: number }>>;
  dueCount(now: Date): Promise<number>;
  /** When the oldest announcement not yet delivered was recorded; undefined when none waits. */
  oldestPendingAnnouncement(): Promise<Date | undefined>;
  /** The earliest next check of a followed approval that is due now; undefined when none is. */
  oldestOverdueCheck(now: Date): Promise<Date | undefined>;
  /** Whether delivery is paused fleet-wide (Slack refuses the app's token). */
  deliveryPaused(): Promise<boolean>;
  /** Approvals waiting for a decision, by how long they have (approval-report.ts's bands). */
  openApprovalsByAge?(now: Date): Promise<Record<AgeBand, number>>;
}

/** What the process knows at scrape time, beside the store. */
export interface LiveGauges {
  /** Whether the approval service answered with our credentials accepted recently. */
  serviceUp(): boolean;
  pool(): PoolStats;
  /** How long the outbox's delivery loop has had no answer from the store, in ms. */
  deliverySinceProgressMs?(): number;
}

/** How many template ids approvals_started_total names before counting the rest as `other`. */
export const TEMPLATE_SERIES = 200;

const prefix = 'slack_approvals_';

/**
 * The app's Prometheus metrics, on a registry of its own (several apps can live in one process,
 * as in the tests), with Node's own (event-loop lag, memory, CPU) beside them. Names are
 * documented in docs/operating.md#metrics; `deploy/` has alert rules and a dashboard built on them.
 * The pieces register in a fixed order, so a scrape lists the series in the same order each time.
 */
export function createMetrics(
  source: MetricsSource,
  live: LiveGauges,
  now: () => Date = () => new Date(),
) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  databaseGauges(registry, source, live, now);
  return {
    registry,
    ...approvalCounters(registry),
    ...operationCounters(registry),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** What the gauges read from the database in one scrape. */
interface Snapshot {
  counts: Awaited<ReturnType<MetricsSource['announcementCounts']>>;
  due: number;
  oldestPending: Date | undefined;
  oldestOverdue: Date | undefined;
  paused: boolean;
  openByAge: Record<AgeBand, number> | undefined;
}

/** Hands a gauge's collect the scrape's snapshot (nothing when the database never answered). */
type FromDatabase = (apply: (snapshot: Snapshot) => void) => Promise<void>;

/**
 * What the gauges read from the database, read once per scrape (every gauge's collect starts
 * in the same turn and shares it) and within DATABASE_READ_MS. When the database does not answer
 * in time, the gauges keep their last values and `answered()` says false: a scrape during an
 * outage still answers, where a failed read used to fail it whole and hide the stall.
 */
function databaseSnapshot(source: MetricsSource, now: () => Date) {
  let last: Snapshot | undefined;
  let answered = true;
  let reading: Promise<Snapshot | undefined> | undefined;
  const read = async (): Promise<Snapshot | undefined> => {
    const at = now();
    const all = Promise.all([
      source.announcementCounts(),
      source.dueCount(at),
      source.oldestPendingAnnouncement(),
      source.oldestOverdueCheck(at),
      source.deliveryPaused(),
      source.openApprovalsByAge?.(at),
    ]).then(([counts, due, oldestPending, oldestOverdue, paused, openByAge]) => ({
      counts,
      due,
      oldestPending,
      oldestOverdue,
      paused,
      openByAge,
    }));
    try {
      const got = await settleWithin(all, DATABASE_READ_MS);
      answered = got !== undefined;
      if (got) last = got;
    } catch {
      answered = false;
    }
    return last;
  };
  const fromDatabase: FromDatabase = (apply) => {
    reading ??= read().finally(() => {
      reading = undefined;
    });
    return reading.then((snapshot) => {
      if (snapshot) apply(snapshot);
    });
  };
  return { fromDatabase, answered: () => answered };
}

/** The gauges set at scrape time: from the database (one shared snapshot) and from the process. */
function databaseGauges(
  registry: Registry,
  source: MetricsSource,
  live: LiveGauges,
  now: () => Date,
): void {
  const snapshot = databaseSnapshot(source, now);
  const ageSeconds = (since: Date | undefined) =>
    since ? Math.max(0, (now().getTime() - since.getTime()) / 1000) : 0;
  outboxGauges(registry, snapshot.fromDatabase, live, ageSeconds);
  processGauges(registry, live);
  stateGauges(registry, snapshot.fromDatabase, snapshot.answered);
}

/** Is the outbox delivering, and are followed approvals checked on time? */
function outboxGauges(
  registry: Registry,
  fromDatabase: FromDatabase,
  live: LiveGauges,
  ageSeconds: (since: Date | undefined) => number,
): void {
  new Gauge({
    name: `${prefix}announcements`,
    help: 'Announcements in the outbox, by state and kind',
    labelNames: ['state', 'kind'],
    registers: [registry],
    async collect() {
      await fromDatabase(({ counts }) => {
        this.reset();
        for (const row of counts) this.set({ state: row.state, kind: row.kind }, row.count);
      });
    },
  });
  new Gauge({
    name: `${prefix}delivery_stalled_seconds`,
    help:
      'Seconds since the outbox’s delivery loop last got an answer from the database (read the ' +
      'outbox or recorded an attempt): near 0 while it works; past LIVENESS_STALL_SECONDS, /healthz fails',
    registers: [registry],
    collect() {
      this.set((live.deliverySinceProgressMs?.() ?? 0) / 1000);
    },
  });
  new Gauge({
    name: `${prefix}due_backlog`,
    help: 'Followed approvals whose next status check is due',
    registers: [registry],
    async collect() {
      await fromDatabase(({ due }) => this.set(due));
    },
  });
  new Gauge({
    name: `${prefix}oldest_pending_announcement_age_seconds`,
    help: 'Age of the oldest announcement not yet delivered to Slack (0 when none waits): are threads getting their updates?',
    registers: [registry],
    async collect() {
      await fromDatabase(({ oldestPending }) => this.set(ageSeconds(oldestPending)));
    },
  });
  new Gauge({
    name: `${prefix}oldest_overdue_check_seconds`,
    help: 'How long the most overdue status check of a followed approval has been due (0 when none is)',
    registers: [registry],
    async collect() {
      await fromDatabase(({ oldestOverdue }) => this.set(ageSeconds(oldestOverdue)));
    },
  });
}

/** What the process knows without the database: the approval service and the connection pool. */
function processGauges(registry: Registry, live: LiveGauges): void {
  new Gauge({
    name: `${prefix}service_up`,
    help: 'Whether the approval service answered with accepted credentials in the last minute (1) or not (0)',
    registers: [registry],
    collect() {
      this.set(live.serviceUp() ? 1 : 0);
    },
  });
  new Gauge({
    name: `${prefix}db_pool_waiting`,
    help: 'Database queries waiting for a free pooled connection',
    registers: [registry],
    collect() {
      this.set(live.pool().waiting);
    },
  });
  new Gauge({
    name: `${prefix}db_pool_connections`,
    help: 'Pooled database connections, by state',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { total, idle } = live.pool();
      this.set({ state: 'idle' }, idle);
      this.set({ state: 'busy' }, Math.max(0, total - idle));
    },
  });
}

/** Fleet-wide state read from the database, whether it answered, and the open approvals' ages. */
function stateGauges(
  registry: Registry,
  fromDatabase: FromDatabase,
  answered: () => boolean,
): void {
  new Gauge({
    name: `${prefix}delivery_paused`,
    help: 'Whether delivery is paused fleet-wide because Slack refuses the app’s token (1) or runs (0)',
    registers: [registry],
    async collect() {
      await fromDatabase(({ paused }) => this.set(paused ? 1 : 0));
    },
  });
  new Gauge({
    name: `${prefix}metrics_database_answered`,
    help: 'Whether the database answered this scrape’s reads in time (1); 0: the gauges read from it keep their last values',
    registers: [registry],
    async collect() {
      await fromDatabase(() => {});
      this.set(answered() ? 1 : 0);
    },
  });
  new Gauge({
    name: `${prefix}open_approvals`,
    help: 'Approvals waiting for a decision, by how long they have waited (age: under-1d, 1d-3d, 3d-7d, over-7d; clock time)',
    labelNames: ['age'],
    registers: [registry],
    async collect() {
      await fromDatabase(({ openByAge }) => {
        if (!openByAge) return;
        for (const { band } of AGE_BANDS) this.set({ age: band }, openByAge[band]);
      });
    },
  });
}

/**
 * Template ids are not bounded (any channel's members may add templates, and one removed and
 * added again is a new id), and a series lives until the process ends: past TEMPLATE_SERIES
 * ids, the others count as `other`, so no one can grow the scrape without end.
 */
function boundedTemplateLabel(): (templateId: string | null) => string {
  const templatesSeen = new Set<string>();
  return (templateId) => {
    if (templateId === null) return 'none';
    if (templatesSeen.has(templateId)) return templateId;
    if (templatesSeen.size >= TEMPLATE_SERIES) return 'other';
    templatesSeen.add(templateId);
    return templateId;
  };
}

/**
 * What approvals do, for owners: labels are entry points, template ids and outcomes, never a
 * person or a title (docs/operating.md#metrics).
 */
function approvalCounters(registry: Registry) {
  const started = new Counter({
    name: `${prefix}approvals_started_total`,
    help: 'Approvals started, by entry point (form, message, workflow, request-again) and template id (none: no template)',
    labelNames: ['entry_point', 'template'],
    registers: [registry],
  });
  for (const entryPoint of ENTRY_POINTS)
    started.inc({ entry_point: entryPoint, template: 'none' }, 0);
  const templateLabel = boundedTemplateLabel();
  const decided = new Counter({
    name: `${prefix}approvals_decided_total`,
    help: 'Decisions the app saw, by outcome (approved, rejected)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['approved', 'rejected']) decided.inc({ outcome }, 0);
  const toDecision = new Histogram({
    name: `${prefix}time_to_decision_working_hours`,
    help: 'From an approval’s start to its decision being seen, in the working hours between (WORKING_HOURS, WORKING_DAYS, WORKING_TIME_ZONE)',
    buckets: [0.25, 0.5, 1, 2, 4, 8, 18, 27, 45, 90],
    registers: [registry],
  });
  const toReply = new Histogram({
    name: `${prefix}decision_reply_seconds`,
    help: 'From a decision being seen to its reply being posted in the request’s thread',
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600],
    registers: [registry],
  });
  return {
    approvalStarted(entryPoint: string, templateId: string | null): void {
      started.inc({ entry_point: entryPoint, template: templateLabel(templateId) });
    },
    approvalDecided(outcome: string, workingHours: number | undefined): void {
      decided.inc({ outcome });
      if (workingHours !== undefined) toDecision.observe(workingHours);
    },
    decisionReplied(seconds: number): void {
      toReply.observe(seconds);
    },
  };
}

/** What the app's background work does: delivery, polling, service calls, purges, Slack errors. */
function operationCounters(registry: Registry) {
  return {
    ...deliveryCounters(registry),
    ...pollCounters(registry),
    ...serviceCallCounters(registry),
    ...retentionCounters(registry),
    ...slackErrorCounters(registry),
  };
}

function deliveryCounters(registry: Registry) {
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
  // Every kind's series exists from the start at 0: Prometheus' increase() misses a series whose
  // first sample is already 1, so the first failure after a restart would never alert.
  for (const kind of ANNOUNCEMENT_KINDS) failed.inc({ kind }, 0);
  return {
    delivery(kind: string, outcome: string, ms: number): void {
      attempts.inc({ kind, outcome });
      attemptSeconds.observe(ms / 1000);
      if (outcome === 'failed') failed.inc({ kind });
    },
  };
}

function pollCounters(registry: Registry) {
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
  return {
    pollPass(ms: number): void {
      passes.inc();
      passSeconds.observe(ms / 1000);
    },
  };
}

function serviceCallCounters(registry: Registry) {
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
  return {
    serviceCall(endpoint: string, outcome: string, ms: number): void {
      serviceCalls.inc({ endpoint, outcome });
      serviceSeconds.observe({ endpoint }, ms / 1000);
    },
  };
}

function retentionCounters(registry: Registry) {
  const purged = new Counter({
    name: `${prefix}retention_deleted_total`,
    help: 'Rows the retention purge deleted, by what they were (approvals, announcements, submission keys)',
    labelNames: ['what'],
    registers: [registry],
  });
  return {
    purged(counts: {
      approvals: number;
      announcements: number;
      confirmations: number;
      submissionKeys: number;
      delegations: number;
      templates: number;
      templateChanges: number;
    }): void {
      purged.inc({ what: 'approvals' }, counts.approvals);
      purged.inc({ what: 'announcements' }, counts.announcements);
      purged.inc({ what: 'confirmations' }, counts.confirmations);
      purged.inc({ what: 'submission_keys' }, counts.submissionKeys);
      purged.inc({ what: 'delegations' }, counts.delegations);
      purged.inc({ what: 'templates' }, counts.templates);
      purged.inc({ what: 'template_changes' }, counts.templateChanges);
    },
  };
}

function slackErrorCounters(registry: Registry) {
  const slackErrors = new Counter({
    name: `${prefix}slack_api_errors_total`,
    help: 'Failed Slack Web API calls of the background delivery, by method and code',
    labelNames: ['method', 'code'],
    registers: [registry],
  });
  return {
    slackError(method: string, code: string): void {
      slackErrors.inc({ method, code });
    },
  };
}
