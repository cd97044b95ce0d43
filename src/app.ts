import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
import { announcementId } from './approvals/tracked-approval.ts';
import type { Config } from './config.ts';
import { AppError, describe } from './errors.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { type PollCounts, pollOnce } from './poller/poll-once.ts';
import { type PollSchedule, startPollSchedule } from './poller/poll-schedule.ts';
import { createProbes, SERVICE_FRESH_MS } from './probes.ts';
import { createHomePublisher } from './slack/home-publisher.ts';
import type { Route } from './slack/http-receiver.ts';
import { createIdentities } from './slack/identities.ts';
import { registerListeners } from './slack/listeners/index.ts';
import { createSlackAnnouncer } from './slack/slack-announcer.ts';
import { createBoltApp, slackClientOptions, socketModeConnection } from './slack/slack-app.ts';
import { createSlackPeople } from './slack/slack-people.ts';
import { createAccountLinkStore } from './store/account-link-store.ts';
import { createApprovalStore } from './store/approval-store.ts';
import { type DatabaseHandle, openDatabase } from './store/database.ts';
import { createMetricsSource } from './store/metrics-source.ts';
import { createSubmissionGuard } from './store/submission-guard-store.ts';

// An idle dispatcher looks for work it was not told about (retries falling due, other replicas).
const DELIVERY_IDLE_MS = 1000;

export interface ApplicationOverrides {
  logDestination?: pino.DestinationStream;
  logger?: Logger;
  now?: () => Date;
  /** Replaces the HTTP client of the approval service. */
  service?: ApprovalService;
}

export interface Application {
  /** Where /slack/events and /healthz are served (HTTP mode), or /healthz (Socket Mode). */
  port: number;
  logger: Logger;
  /**
   * One poll pass at `now`, as the schedule would run it, then what it recorded delivered (the
   * background delivery would do that within moments; tests want it done when this returns).
   */
  poll(now?: Date): Promise<PollCounts & { delivered: DispatchCounts }>;
  /** Delivers what is deliverable at `now` and waits until that is done. */
  deliver(now?: Date): Promise<DispatchCounts>;
  stop(): Promise<void>;
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
    onConnectionError: (error) =>
      logger.warn({ error: describe(error) }, 'database connection lost; it will reconnect'),
  });
  logger.info({ dialect: database.dialect, location: database.location }, 'database ready');
  const store = createApprovalStore(database.db, database.dialect);
  const metrics = createMetrics(createMetricsSource(database.db), now);
  let lastServiceOk: number | undefined;
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
    },
  );

  try {
    await probeService(service, logger);
    return await serve(config, {
      logger,
      now,
      database,
      store,
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
    store: ReturnType<typeof createApprovalStore>;
    service: ApprovalService;
    metrics: Metrics;
    lastServiceOk: () => number | undefined;
  },
): Promise<Application> {
  const { logger, now, database, store, service, metrics } = parts;
  const botToken = config.slack.botToken ?? '';
  let ready = false;
  let socketConnected: (() => boolean) | undefined;
  const probes = createProbes({
    db: database.db as unknown as Kysely<never>,
    registry: metrics.registry,
    lastServiceOk: parts.lastServiceOk,
    socketConnected: () => socketConnected?.() ?? true,
    serving: () => ready,
  });
  const routes: Route[] = [
    { path: '/healthz', method: 'GET', handler: (_req, res) => probes.healthz(res) },
    { path: '/readyz', method: 'GET', handler: (_req, res) => void probes.readyz(res) },
    { path: '/metrics', method: 'GET', handler: (_req, res) => void probes.metrics(res) },
  ];
  const bolt = await createBoltApp({
    botToken,
    ...(config.slack.signingSecret ? { signingSecret: config.slack.signingSecret } : {}),
    ...(config.mode === 'socket' && config.slack.appToken
      ? { appToken: config.slack.appToken }
      : {}),
    ...(config.slack.apiUrl ? { apiUrl: config.slack.apiUrl } : {}),
    logger,
    routes,
    timeoutMs: config.slack.timeoutMs,
  });
  const people = createSlackPeople(bolt.client);
  const links = createAccountLinkStore(database.db);
  const identities = createIdentities({ people, links });
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
    { people, identities, links, store, logger, now, ...webUrl },
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
    },
  );
  registerListeners(bolt, {
    service,
    store,
    dispatcher,
    submissions: createSubmissionGuard(database.db),
    textLimits: { title: TEXT_LIMITS.title, note: config.approval.noteLimit },
    people,
    identities,
    links,
    home,
    logger,
    now,
    ...webUrl,
  });

  let port: number;
  let healthServer: Server | undefined;
  if (config.mode === 'socket') {
    socketConnected = socketModeConnection(bolt);
    await bolt.start();
    // Socket Mode needs no public port; the probes and metrics still get one.
    healthServer = createServer((req, res) => {
      const route = routes.find((r) => r.path === req.url && r.method === req.method);
      if (route) route.handler(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => healthServer?.listen(config.port, config.host, resolve));
    port = (healthServer.address() as AddressInfo).port;
  } else {
    const server = (await bolt.start({
      port: config.port,
      ...(config.host ? { host: config.host } : {}),
    })) as Server;
    port = (server.address() as AddressInfo).port;
  }

  const pollDeps = { store, service, logger, announce: dispatcher.wake };
  const pollOptions = {
    concurrency: config.poll.concurrency,
    maxIntervalMs: config.poll.maxIntervalMs,
    giveUpAfterMs: config.poll.giveUpAfterMs,
    passBudgetMs: config.poll.passBudgetMs,
    // A check may take three timeouts (two retries) and a little backoff.
    leaseMs: config.poll.passBudgetMs + 3 * config.approval.timeoutMs + 2000,
    ...(config.reminders.max > 0 ? { reminders: config.reminders } : {}),
  };
  // Whatever an earlier run left undelivered (it may have died mid-post) goes out in the background.
  dispatcher.start();
  const schedule: PollSchedule = startPollSchedule(
    pollDeps,
    { ...pollOptions, cron: config.poll.cron, onPass: (ms) => metrics.pollPass(ms) },
    now,
  );
  // Readiness needs a recent answer from the service; one an hour would leave it stale.
  const reprobe = setInterval(() => {
    const last = parts.lastServiceOk();
    if (last === undefined || Date.now() - last > SERVICE_FRESH_MS / 2)
      void probeService(service, logger).catch(() => undefined);
  }, SERVICE_FRESH_MS / 4);
  reprobe.unref();
  ready = true;
  logger.info({ mode: config.mode, port, cron: config.poll.cron }, 'slack-approvals is serving');

  return {
    port,
    logger,
    async poll(at = now()) {
      const counts = await pollOnce(pollDeps, pollOptions, at);
      return { ...counts, delivered: await dispatcher.drain(at) };
    },
    deliver: (at = now()) => dispatcher.drain(at),
    async stop() {
      ready = false;
      clearInterval(reprobe);
      await schedule.stop();
      await dispatcher.stop();
      await bolt.stop();
      if (healthServer) await new Promise<void>((resolve) => healthServer?.close(() => resolve()));
      await database.close();
    },
  };
}

// A number the service accepts and has never issued: it answers `data: null`.
const PROBE_DJBH = 'readiness-probe';

/**
 * Asks the service once: refused credentials stop the start with a message naming the settings;
 * an unreachable service is a warning (the app starts, not ready, and keeps asking).
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
      'the approval service did not answer; starting anyway, not ready until it does',
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
