import type pino from 'pino';
import { TEXT_LIMITS } from './approvals/acceptable-text.ts';
import type {
  AnnouncementDispatcher,
  DispatchCounts,
} from './approvals/announcement-dispatcher.ts';
import type { ApprovalService } from './approvals/approval-types.ts';
import type { Delegations } from './approvals/delegation.ts';
import type { TemplateStore } from './approvals/request-templates.ts';
import type { PurgeCounts } from './approvals/retention.ts';
import { cacheDepartments } from './approvals/service-directory.ts';
import { type StepStarterDeps, startDueSteps } from './approvals/step-starter.ts';
import { type AdminRoutes, createAdminRoutes } from './composition/admin-routes.ts';
import { observeApprovals } from './composition/approval-metrics.ts';
import { createDelivery } from './composition/delivery.ts';
import { createSchedules, type Schedules } from './composition/schedules.ts';
import {
  createObservedService,
  createServiceHealth,
  probeService,
  type ServiceHealth,
} from './composition/service.ts';
import { createSlackSide, type SlackSide } from './composition/slack-side.ts';
import { createStores, openAppDatabase, type Stores } from './composition/stores.ts';
import type { Config } from './config.ts';
import { createInFlight, type InFlight } from './in-flight.ts';
import { type LifecycleParts, type Phase, startLifecycle } from './lifecycle.ts';
import { createLiveness, DELIVERY_LOOP, type Liveness } from './liveness.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import type { PollCounts } from './poller/poll-once.ts';
import { givenUpLine, grantsOf } from './slack/granted-scopes.ts';
import { resumeConfirmedStarts } from './slack/listeners/actions/step-confirmation-actions.ts';
import { registerListeners } from './slack/listeners/index.ts';
import {
  socketModeAnswered,
  socketModeConnection,
  startSocketMode,
} from './slack/receivers/slack-app.ts';
import type { SlackDeps } from './slack/slack-deps.ts';
import type { DatabaseHandle } from './store/database.ts';
import { createMetricsSource } from './store/metrics-source.ts';
import { announcementRecordedAt } from './store/report-store.ts';

// What is built where: src/composition/ (stores, the service, the Slack side, delivery, the
// schedules, the admin routes); lifecycle.ts starts and stops them in order.

export interface ApplicationOverrides {
  logDestination?: pino.DestinationStream;
  logger?: Logger;
  now?: () => Date;
  /** Replaces the HTTP client of the approval service. */
  service?: ApprovalService;
  /**
   * Runs once the database is migrated and before anything is served: the sandbox puts its
   * example templates and a person with a delegate while away in here.
   */
  seed?: (stores: { templates: TemplateStore; delegations: Delegations }) => Promise<void>;
}

export interface Application {
  /**
   * PORT as listened on: /slack/events (HTTP mode), and /healthz and /readyz unless ADMIN_PORT is
   * set. Undefined in Socket Mode with ADMIN_PORT, where nothing needs PORT.
   */
  port: number | undefined;
  /** ADMIN_PORT as listened on: /healthz, /readyz and /metrics; undefined without ADMIN_PORT. */
  adminPort?: number;
  logger: Logger;
  /**
   * One poll pass at `now`, as the schedule would run it (with the sweep of unanswered workflow
   * confirmations), then what it recorded delivered (the background delivery would do that within
   * moments; tests want it done when this returns).
   */
  poll(now?: Date): Promise<PollCounts & { delivered: DispatchCounts }>;
  /** One hot pass at `now` (HOT_POLL_CRON's), then what it recorded delivered. */
  hotPoll(now?: Date): Promise<PollCounts & { delivered: DispatchCounts }>;
  /** Delivers what is deliverable at `now` and waits until that is done. */
  deliver(now?: Date): Promise<DispatchCounts>;
  /** The retention purge at `now`, if no replica ran it in this period; what it deleted. */
  purge(now?: Date): Promise<PurgeCounts | undefined>;
  /**
   * Stops without losing work: readiness turns 503 at once, no new poll or delivery work is
   * claimed, requests still arriving are answered for `drainMs` (default 0; SIGTERM uses
   * SHUTDOWN_DRAIN_MS), then the ports close and what is under way (a submission's call to the
   * service and its recording, deliveries) may finish until `graceMs` has passed since the stop
   * began; then the database closes. What was left is logged: its leases return it to another
   * replica.
   */
  stop(options?: { graceMs?: number; drainMs?: number }): Promise<void>;
}

/**
 * Builds and starts everything from a Config: database (migrated), approval-service client,
 * Bolt app with its listeners, the announcement dispatcher (delivering in the background, so
 * whatever an earlier run left undelivered goes out once serving) and the poll schedule. The
 * sandbox calls this too, with a Config pointing at its own stand-ins.
 */
export async function startApplication(
  config: Config,
  overrides: ApplicationOverrides = {},
): Promise<Application> {
  if (!config.slack.botToken)
    throw new Error(
      'startApplication needs Slack settings; the sandbox provides them in sandbox mode',
    );
  const logger = overrides.logger ?? createLogger(config.logLevel, overrides.logDestination);
  const now = overrides.now ?? (() => new Date());
  const database = await openAppDatabase(config, logger);
  const health = createServiceHealth(logger);
  const liveness = createLiveness(config.livenessStallMs, logger);
  const metrics = createMetrics(
    createMetricsSource(database.db),
    {
      serviceUp: health.up,
      pool: database.pool,
      deliverySinceProgressMs: () => liveness.sinceProgressMs(DELIVERY_LOOP),
    },
    now,
  );
  const created = createStores(database);
  // Every surface and schedule records approvals through these: what they do is counted here.
  const stores: Stores = {
    ...created,
    approvals: observeApprovals(created.approvals, metrics, {
      hours: config.workingHours,
      logger,
      recordedAt: (id) => announcementRecordedAt(database.db, id),
    }),
  };
  const service = createObservedService(config, overrides.service, metrics, health);
  try {
    await overrides.seed?.({ templates: stores.templates, delegations: stores.delegations });
    // Asked while Slack checks the bot token (serve): a start waits for the slower of the two.
    const probed = probeService(service, logger);
    probed.catch(() => undefined); // awaited in serve
    return await serve(config, {
      logger,
      now,
      database,
      stores,
      service,
      metrics,
      health,
      liveness,
      probed,
    });
  } catch (error) {
    // Nothing half-started stays open: a failed start (say, a refused bot token) releases the database.
    await database.close().catch(() => undefined);
    throw error;
  }
}

interface Parts {
  logger: Logger;
  now: () => Date;
  database: DatabaseHandle;
  stores: Stores;
  service: ApprovalService;
  metrics: Metrics;
  health: ServiceHealth;
  liveness: Liveness;
  /** The start's probe of the service; refused credentials reject it. */
  probed: Promise<void>;
}

/** Wires the areas together, starts them through the lifecycle, and answers for the result. */
async function serve(config: Config, parts: Parts): Promise<Application> {
  const { logger, now, database, stores, service, metrics } = parts;
  const state = runState(config);
  const inFlight = createInFlight();
  let socketConnected: (() => boolean) | undefined;
  const routes = createAdminRoutes(config, {
    database,
    metrics,
    lastServiceOk: parts.health.lastOk,
    socketConnected: () => socketConnected?.() ?? true,
    phase: state.phase,
    liveness: parts.liveness,
  });
  const slackSide = createSlackSide(config, {
    logger,
    now,
    stores,
    routes: routes.slackPort,
    inFlight,
  });
  slackSide.catch(() => undefined); // awaited below
  // The service's answer first: refused credentials are what a start says, whatever Slack says.
  await parts.probed;
  const slack = await slackSide;
  // A leaner manifest (deploy/slack/) leaves scopes out: give up what needs them, in words.
  const grants = grantsOf(slack.grantedScopes);
  const givenUp = givenUpLine(grants);
  if (givenUp) logger.warn({ missingScopes: grants.missingHistoryScopes }, givenUp);
  const delivery = createDelivery(config, {
    searchesForEarlierPosts: grants.searchesForEarlierPosts,
    logger,
    now,
    stores,
    service,
    metrics,
    home: slack.home,
  });
  const { dispatcher } = delivery;
  parts.liveness.watch(DELIVERY_LOOP, dispatcher.sinceProgressMs);
  const slackDeps = slackDepsOf(config, parts, slack, dispatcher, state.mayStart);
  registerListeners(slack.bolt, slackDeps);
  const sweepSteps = async (at: Date) => {
    await slack.confirmer.sweep(at);
    // Not while this replica stops: it would only hand them on again.
    if (state.phase() !== 'stopping') await resumeConfirmedStarts(slackDeps, at);
    // The next steps of requests in several steps that a decision made due.
    await startDueSteps(stepStarterDeps(config, parts, state.mayStart), {
      // A start may take three timeouts; past this a worker that marked one `starting` is taken
      // to have died, and the step is marked uncertain.
      leaseMs: 3 * config.approval.timeoutMs + 10_000,
    });
    dispatcher.wake();
  };
  const schedules = createSchedules(config, {
    ...parts,
    dispatcher,
    sweepSteps,
    background: delivery,
    lastServiceOk: parts.health.lastOk,
  });
  if (config.mode === 'socket') socketConnected = socketModeConnection(slack.bolt);
  const running = await startLifecycle(
    lifecyclePartsOf(config, { ...parts, state, inFlight, routes, slack, dispatcher, schedules }),
  );
  logger.info(
    { mode: config.mode, port: running.port, adminPort: running.adminPort, cron: config.poll.cron },
    'slack-approvals is serving',
  );
  return {
    port: running.port,
    ...(running.adminPort !== undefined ? { adminPort: running.adminPort } : {}),
    logger,
    async poll(at = now()) {
      const counts = await schedules.pollOnce(at);
      await sweepSteps(at);
      return { ...counts, delivered: await dispatcher.drain(at) };
    },
    async hotPoll(at = now()) {
      const counts = await schedules.hotPass(at);
      return { ...counts, delivered: await dispatcher.drain(at) };
    },
    deliver: (at = now()) => dispatcher.drain(at),
    purge: (at = now()) => schedules.purge(at),
    stop: ({ graceMs = config.shutdown.graceMs, drainMs = 0 } = {}) =>
      running.stop({ graceMs, drainMs }),
  };
}

/** What the worker that starts due steps of requests in several steps needs (step-starter.ts). */
function stepStarterDeps(config: Config, parts: Parts, mayStart: () => boolean): StepStarterDeps {
  const { stores } = parts;
  return {
    chains: stores.chains,
    service: parts.service,
    firstStep: (djbh) => stores.approvals.getApproval(djbh),
    delegations: stores.delegations,
    now: parts.now,
    noteLimit: config.approval.noteLimit,
    mayStart,
    logger: parts.logger,
  };
}

/** What the lifecycle starts and stops (src/lifecycle.ts), from the areas built above. */
function lifecyclePartsOf(
  config: Config,
  built: Pick<Parts, 'logger' | 'database'> & {
    state: RunState;
    inFlight: InFlight;
    routes: AdminRoutes;
    slack: SlackSide;
    dispatcher: AnnouncementDispatcher;
    schedules: Schedules;
  },
): LifecycleParts {
  const { slack, routes } = built;
  return {
    logger: built.logger,
    setPhase: built.state.setPhase,
    database: built.database,
    slack: {
      bolt: slack.bolt,
      socketMode: config.mode === 'socket',
      // A refused SLACK_APP_TOKEN is one line naming it, like a refused bot token.
      connectSocket: () => startSocketMode(slack.bolt, config.slack.apiUrl),
      socketAnswered: (deadline) => socketModeAnswered(slack.bolt, deadline),
      port: config.port,
      host: config.host,
      routes: routes.slackPort,
    },
    ...(config.admin ? { admin: { routes: routes.admin, ...config.admin } } : {}),
    inFlight: built.inFlight,
    delivery: built.dispatcher,
    startScheduled: built.schedules.start,
  };
}

/** What the listeners get (src/slack/slack-deps.ts), from the areas built above. */
function slackDepsOf(
  config: Config,
  parts: Parts,
  slack: SlackSide,
  dispatcher: AnnouncementDispatcher,
  mayStart: () => boolean,
): SlackDeps {
  const { stores } = parts;
  return {
    // The form walks the requester's chain and then checks the approver picked from it: one lookup each.
    service: cacheDepartments(parts.service),
    mayStart,
    store: stores.approvals,
    dispatcher,
    submissions: stores.submissions,
    textLimits: { title: TEXT_LIMITS.title, note: config.approval.noteLimit },
    people: slack.people,
    identities: slack.identities,
    links: stores.links,
    accountLinking: config.accountLinking,
    templates: stores.templates,
    delegations: stores.delegations,
    chains: stores.chains,
    home: slack.home,
    access: slack.access,
    membership: slack.membership,
    confirmations: stores.confirmations,
    confirmer: slack.confirmer,
    logger: parts.logger,
    now: parts.now,
    ...slack.webUrl,
    reports: {
      records: stores.reports,
      // Everyone in WORKING_TIME_ZONE, as `npm run report` counts them (docs/reports.md).
      options: {
        hours: config.workingHours,
        zoneOf: () => config.workingHours?.defaultTimeZone ?? 'UTC',
      },
    },
  };
}

/**
 * The app's phase as the lifecycle sets it, and whether an approval may still start: once
 * stopping, only while the grace left covers the call to the service and its recording (one cut
 * off would exist upstream only).
 */
type RunState = ReturnType<typeof runState>;

function runState(config: Config) {
  let phase: Phase = 'starting';
  let stopDeadline: number | undefined;
  return {
    phase: () => phase,
    setPhase(next: Phase, deadline?: number) {
      phase = next;
      stopDeadline = deadline;
    },
    mayStart: () =>
      stopDeadline === undefined || stopDeadline - Date.now() > config.approval.timeoutMs + 3000,
  };
}
