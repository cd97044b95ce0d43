import { type WebAPICallResult, WebClient } from '@slack/web-api';
import type { Kysely } from 'kysely';
import type pino from 'pino';
import { createApprovalServiceClient } from './approval-service/approval-service-client.ts';
import { ApprovalServiceError } from './approval-service/approval-service-error.ts';
import { observeService } from './approval-service/observed-service.ts';
import { TEXT_LIMITS } from './approvals/acceptable-text.ts';
import {
  createAnnouncementDispatcher,
  type DispatchCounts,
} from './approvals/announcement-dispatcher.ts';
import type { ApprovalService } from './approvals/approval-types.ts';
import { awayOf } from './approvals/away-rule.ts';
import { escalationTarget } from './approvals/escalation.ts';
import type { TemplateStore } from './approvals/request-templates.ts';
import type { PurgeCounts } from './approvals/retention.ts';
import { announcementId, type TrackedApproval } from './approvals/tracked-approval.ts';
import type { Config } from './config.ts';
import { AppError, describe } from './errors.ts';
import { createInFlight } from './in-flight.ts';
import { type Phase, type Stoppable, startLifecycle } from './lifecycle.ts';
import { startLogContext } from './log-context.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { type PollCounts, pollOnce } from './poller/poll-once.ts';
import { startPollSchedule } from './poller/poll-schedule.ts';
import { startRetentionSchedule } from './poller/retention-schedule.ts';
import { createProbes, SERVICE_FRESH_MS } from './probes.ts';
import { createAccess } from './slack/access.ts';
import { createConversationMembership } from './slack/conversation-members.ts';
import { createSlackAnnouncer } from './slack/delivery/slack-announcer.ts';
import { createHomePublisher } from './slack/home-publisher.ts';
import type { Route } from './slack/http-receiver.ts';
import { createIdentities } from './slack/identities.ts';
import { registerListeners } from './slack/listeners/index.ts';
import {
  createBoltApp,
  slackClientOptions,
  socketModeConnection,
  startSocketMode,
} from './slack/slack-app.ts';
import { createSlackPeople } from './slack/slack-people.ts';
import { createStepConfirmer } from './slack/step-confirmer.ts';
import { createAccountLinkStore } from './store/account-link-store.ts';
import { type ApprovalStores, createApprovalStores } from './store/approval-stores.ts';
import { type DatabaseHandle, openDatabase } from './store/database.ts';
import { createMetricsSource } from './store/metrics-source.ts';
import { createRetentionStore } from './store/retention-store.ts';
import { createStepConfirmationStore } from './store/step-confirmation-store.ts';
import { createSubmissionGuard } from './store/submission-guard-store.ts';
import { createTemplateStore } from './store/template-store.ts';

// An idle dispatcher looks for work it was not told about (retries falling due, other replicas).
const DELIVERY_IDLE_MS = 1000;
// A busy lane is claimed up to this long before its pace allows the next post (and never more
// than half its interval), so the claim's database round trips do not widen the gap between
// posts (measured in bench/delivery-bench.ts).
const LANE_LOOKAHEAD_MS = 250;

export interface ApplicationOverrides {
  logDestination?: pino.DestinationStream;
  logger?: Logger;
  now?: () => Date;
  /** Replaces the HTTP client of the approval service. */
  service?: ApprovalService;
  /**
   * Runs once the database is migrated and before anything is served: the sandbox puts its
   * example templates in here.
   */
  seed?: (stores: { templates: TemplateStore }) => Promise<void>;
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
  const botToken = config.slack.botToken;
  if (!botToken)
    throw new Error(
      'startApplication needs Slack settings; the sandbox provides them in sandbox mode',
    );
  const logger = overrides.logger ?? createLogger(config.logLevel, overrides.logDestination);
  const now = overrides.now ?? (() => new Date());
  const database = await openDatabase(config.databaseUrl, {
    poolSize: config.databasePool.size,
    statementTimeoutMs: config.databasePool.statementTimeoutMs,
    // A pooled connection may have been opened while some request was handled: its error is
    // nobody's request, so it is logged in a context of its own.
    onConnectionError: (error) =>
      startLogContext({}, () =>
        logger.warn({ error: describe(error) }, 'database connection lost; it will reconnect'),
      ),
  });
  logger.info({ dialect: database.dialect, location: database.location }, 'database ready');
  if (database.schemaAhead.length > 0)
    logger.warn(
      { migrations: database.schemaAhead },
      'the database was migrated by a newer release (a rollback?); running on it unchanged',
    );
  const store = createApprovalStores(database.db, database.dialect);
  const templates = createTemplateStore(database.db, database.dialect);
  let lastServiceOk: number | undefined;
  const serviceState = serviceStateLog(logger);
  const metrics = createMetrics(
    createMetricsSource(database.db),
    {
      serviceUp: () =>
        lastServiceOk !== undefined && Date.now() - lastServiceOk <= SERVICE_FRESH_MS,
      pool: database.pool,
    },
    now,
  );
  const service = observeService(
    overrides.service ??
      createApprovalServiceClient({
        baseUrl: config.approval.baseUrl ?? '',
        appName: config.approval.appName,
        appKey: config.approval.appKey,
        timeoutMs: config.approval.timeoutMs,
        noteLimit: config.approval.noteLimit,
      }),
    (endpoint, outcome, ms) => {
      metrics.serviceCall(endpoint, outcome, ms);
      if (outcome === 'ok') lastServiceOk = Date.now();
      serviceState.saw(outcome);
    },
  );

  try {
    await overrides.seed?.({ templates });
    await probeService(service, logger);
    return await serve(config, {
      logger,
      now,
      database,
      store,
      templates,
      service,
      metrics,
      lastServiceOk: () => lastServiceOk,
    });
  } catch (error) {
    // Nothing half-started stays open: a failed start (say, a refused bot token) releases the database.
    await database.close().catch(() => undefined);
    throw error;
  }
}

async function serve(
  config: Config,
  parts: {
    logger: Logger;
    now: () => Date;
    database: DatabaseHandle;
    store: ApprovalStores;
    templates: TemplateStore;
    service: ApprovalService;
    metrics: Metrics;
    lastServiceOk: () => number | undefined;
  },
): Promise<Application> {
  const { logger, now, database, store, templates, service, metrics } = parts;
  const botToken = config.slack.botToken ?? '';
  let phase: Phase = 'starting';
  // Once stopping, an approval is started only while the grace left covers the call to the
  // service and its recording: one cut off would exist upstream only.
  let stopDeadline: number | undefined;
  const mayStart = () =>
    stopDeadline === undefined || stopDeadline - Date.now() > config.approval.timeoutMs + 3000;
  const inFlight = createInFlight();
  let socketConnected: (() => boolean) | undefined;
  const probes = createProbes({
    db: database.db as unknown as Kysely<never>,
    registry: metrics.registry,
    lastServiceOk: parts.lastServiceOk,
    socketConnected: () => socketConnected?.() ?? true,
    phase: () => phase,
  });
  const probeRoutes: Route[] = [
    { path: '/healthz', method: 'GET', handler: (_req, res) => probes.healthz(res) },
    { path: '/readyz', method: 'GET', handler: (_req, res) => void probes.readyz(res) },
  ];
  const adminRoutes: Route[] = [
    ...probeRoutes,
    { path: '/metrics', method: 'GET', handler: (_req, res) => void probes.metrics(res) },
  ];
  // PORT is what Slack (or the load balancer in front) reaches: it keeps the probes only while
  // there is no admin listener to take them, and never serves /metrics.
  const slackPortRoutes = config.admin ? [] : probeRoutes;
  const bolt = await createBoltApp({
    botToken,
    ...(config.slack.signingSecret ? { signingSecret: config.slack.signingSecret } : {}),
    ...(config.mode === 'socket' && config.slack.appToken
      ? { appToken: config.slack.appToken }
      : {}),
    ...(config.slack.apiUrl ? { apiUrl: config.slack.apiUrl } : {}),
    logger,
    routes: slackPortRoutes,
    timeoutMs: config.slack.timeoutMs,
    inFlight,
  });
  const people = createSlackPeople(bolt.client);
  const links = createAccountLinkStore(database.db);
  const identities = createIdentities({ people, links });
  const access = createAccess({
    identities,
    membership: createConversationMembership(bolt.client, () => now().getTime()),
  });
  // The outbox has a client of its own, so a throttled background never slows an interaction.
  const background = new (meteredClient(metrics))(
    botToken,
    slackClientOptions('background', {
      ...(config.slack.apiUrl ? { apiUrl: config.slack.apiUrl } : {}),
      logger,
      timeoutMs: config.slack.timeoutMs,
    }),
  );
  const backgroundPeople = createSlackPeople(background);
  const webUrl = config.approval.webUrl ? { webUrl: config.approval.webUrl } : {};
  const home = createHomePublisher(
    { people, identities, links, store, logger, now, access, ...webUrl },
    bolt.client,
  );
  const announcer = createSlackAnnouncer({
    client: background,
    people: backgroundPeople,
    identities: createIdentities({ people: backgroundPeople, links }),
    home,
    ...webUrl,
    channelLanguage: config.language,
    giveUpAfterDays: Math.round(config.poll.giveUpAfterMs / 86_400_000),
    sentDm: (djbh) => store.sentPost(announcementId(djbh, 'approver-dm')),
    sentPost: (id) => store.sentPost(id),
    logger,
  });
  const dispatcher = createAnnouncementDispatcher(
    {
      store,
      announcer,
      logger,
      now,
      stillPending: async (approval) =>
        (await service.getStatus(approval.djbh)).decision === 'pending',
      onOutcome: (outcome, kind, ms) => metrics.delivery(kind, outcome, ms),
    },
    {
      leaseMs: config.delivery.leaseMs,
      callTimeoutMs: config.slack.timeoutMs,
      retryForMs: config.delivery.retryForMs,
      laneIntervalMs: config.delivery.channelIntervalMs,
      concurrency: config.delivery.concurrency,
      idleMs: DELIVERY_IDLE_MS,
      laneLookaheadMs: Math.min(LANE_LOOKAHEAD_MS, config.delivery.channelIntervalMs / 2),
    },
  );
  const confirmations = createStepConfirmationStore(database.db);
  const confirmer = createStepConfirmer({
    client: bolt.client,
    confirmations,
    logger,
    confirmMs: config.workflow.confirmMs,
  });
  registerListeners(bolt, {
    service,
    mayStart,
    store,
    dispatcher,
    submissions: createSubmissionGuard(database.db),
    textLimits: { title: TEXT_LIMITS.title, note: config.approval.noteLimit },
    people,
    identities,
    links,
    templates,
    home,
    access,
    confirmations,
    confirmer,
    logger,
    now,
    ...webUrl,
  });

  // Found with the outbox's own Slack client, so the lookups never slow an interaction down.
  const backgroundIdentities = createIdentities({ people: backgroundPeople, links });
  const pollDeps = {
    store,
    service,
    logger,
    announce: dispatcher.wake,
    escalationTarget: (approval: TrackedApproval, signal?: AbortSignal) =>
      escalationTarget(
        {
          service,
          findChatUser: (login) => backgroundIdentities.slackUserOf(login),
          awayOf: async (chatId) => awayOf((await backgroundPeople.get(chatId)).presence, now()),
        },
        approval,
        signal,
      ),
  };
  const pollOptions = {
    concurrency: config.poll.concurrency,
    maxIntervalMs: config.poll.maxIntervalMs,
    giveUpAfterMs: config.poll.giveUpAfterMs,
    passBudgetMs: config.poll.passBudgetMs,
    // A check may take three timeouts (two retries) and a little backoff.
    leaseMs: config.poll.passBudgetMs + 3 * config.approval.timeoutMs + 2000,
    ...(config.reminders.max > 0 ? { reminders: config.reminders } : {}),
    ...(config.escalateAfterReminders > 0 && config.reminders.max > 0
      ? {
          escalation: {
            afterReminders: config.escalateAfterReminders,
            answerWithinMs: config.reminders.intervalMs,
          },
        }
      : {}),
  };
  if (config.mode === 'socket') socketConnected = socketModeConnection(bolt);
  let retention: ReturnType<typeof startRetentionSchedule> | undefined;
  const running = await startLifecycle({
    logger,
    setPhase: (next, deadline) => {
      phase = next;
      stopDeadline = deadline;
    },
    database,
    slack: {
      bolt,
      socketMode: config.mode === 'socket',
      // A refused SLACK_APP_TOKEN is one line naming it, like a refused bot token.
      connectSocket: () => startSocketMode(bolt, config.slack.apiUrl),
      port: config.port,
      host: config.host,
      routes: slackPortRoutes,
    },
    ...(config.admin ? { admin: { routes: adminRoutes, ...config.admin } } : {}),
    inFlight,
    delivery: dispatcher,
    startScheduled: () => {
      const checks = startPollSchedule(
        pollDeps,
        {
          ...pollOptions,
          cron: config.poll.cron,
          onPass: (ms) => metrics.pollPass(ms),
          // Unanswered confirmations of workflow steps end on the same beat as the checks.
          alongside: (at) => confirmer.sweep(at),
        },
        now,
      );
      retention = startRetentionSchedule(
        { store: createRetentionStore(database.db), logger, onPurge: metrics.purged },
        { retentionDays: config.retentionDays },
        now,
      );
      return [checks, retention, reprobeService(service, logger, parts.lastServiceOk)];
    },
  });
  logger.info(
    { mode: config.mode, port: running.port, adminPort: running.adminPort, cron: config.poll.cron },
    'slack-approvals is serving',
  );

  return {
    port: running.port,
    ...(running.adminPort !== undefined ? { adminPort: running.adminPort } : {}),
    logger,
    async poll(at = now()) {
      const counts = await pollOnce(pollDeps, pollOptions, at);
      await confirmer.sweep(at);
      return { ...counts, delivered: await dispatcher.drain(at) };
    },
    deliver: (at = now()) => dispatcher.drain(at),
    purge: async (at = now()) => retention?.runOnce(at),
    stop: ({ graceMs = config.shutdown.graceMs, drainMs = 0 } = {}) =>
      running.stop({ graceMs, drainMs }),
  };
}

/**
 * Keeps the service's state fresh for /readyz's body and the service_up metric: asks it when
 * nothing else did for half a minute.
 */
function reprobeService(
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
async function probeService(service: ApprovalService, logger: Logger): Promise<void> {
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

/** A WebClient that counts its failed calls by method and code. */
function meteredClient(metrics: Metrics) {
  return class MeteredWebClient extends WebClient {
    override async apiCall(
      method: string,
      options?: Record<string, unknown>,
    ): Promise<WebAPICallResult> {
      try {
        return await super.apiCall(method, options);
      } catch (error) {
        const e = error as { data?: { error?: string }; code?: string; statusCode?: number };
        metrics.slackError(
          method,
          e.data?.error ?? (e.statusCode ? `http_${e.statusCode}` : (e.code ?? 'unknown')),
        );
        throw error;
      }
    }
  };
}

/** A plain HTTP listener for a few routes (the probes, metrics); 404 for anything else. */
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
