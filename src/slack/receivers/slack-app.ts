import { App } from '@slack/bolt';
import { WebClient, type WebClientOptions } from '@slack/web-api';
import { AppError } from '../../errors.ts';
import type { InFlight } from '../../in-flight.ts';
import { withLogContext } from '../../log-context.ts';
import type { Logger } from '../../logger.ts';
import { boltLogger } from '../../logger.ts';
import { redactUrl } from '../../redact.ts';
import { type Route, SlackHttpReceiver } from './http-receiver.ts';
import { requestId, requestKind } from './slack-request.ts';
import { AcknowledgingSocketModeReceiver } from './socket-mode-receiver.ts';

export interface BoltAppOptions {
  botToken: string;
  /** HTTP mode: requests to POST /slack/events are verified with it. */
  signingSecret?: string;
  /** Socket Mode, when set. */
  appToken?: string;
  /** Web API base URL (tests and the sandbox point it at a local stand-in). */
  apiUrl?: string;
  logger: Logger;
  /** Extra HTTP routes beside /slack/events (HTTP mode only), e.g. /healthz. */
  routes?: Route[];
  /** The longest one Web API call may take. */
  timeoutMs: number;
  /** Log Slack's request and response bodies at debug (LOG_SLACK_BODIES); never by default. */
  slackBodies?: boolean;
  /** Counts each request's listeners as work under way, for a stop to wait for. */
  inFlight?: InFlight;
  /** When a request no listener acknowledged is answered anyway; Slack's rule unless a test sets it. */
  ackDeadlineMs?: number;
}

/**
 * Web API client settings, one set per use:
 * - `interactive` (Bolt's client, used while a person waits): a couple of quick retries, and a
 *   429 fails at once instead of waiting minutes past the trigger's 3 s.
 * - `background` (the outbox): no retries at all, since a post retried after a timeout or a 5xx
 *   can post twice; a 429 is thrown so the dispatcher can pace the channel and look for an
 *   earlier post before trying again.
 */
export function slackClientOptions(
  use: 'interactive' | 'background',
  options: Pick<BoltAppOptions, 'apiUrl' | 'logger' | 'timeoutMs' | 'slackBodies'>,
): WebClientOptions {
  return {
    ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
    logger: slackLogger(options),
    rejectRateLimitedCalls: true,
    ...(use === 'interactive'
      ? {
          timeout: Math.min(options.timeoutMs, 5000),
          retryConfig: { retries: 2, factor: 2, minTimeout: 200, maxTimeout: 1000 },
        }
      : { timeout: options.timeoutMs, retryConfig: { retries: 0 } }),
  };
}

/** The logger Slack's libraries write to: bodies only when LOG_SLACK_BODIES asks for them. */
function slackLogger(options: Pick<BoltAppOptions, 'logger' | 'slackBodies'>) {
  return boltLogger(options.logger, { slackBodies: options.slackBodies === true });
}

/**
 * Bolt's start in Socket Mode, with a refused SLACK_APP_TOKEN (apps.connections.open answering
 * `invalid_auth`, `not_allowed_token_type`, …) or an unreachable Slack told in one line, as a
 * refused bot token is, instead of the client's error with its stack.
 */
export async function startSocketMode(app: App, apiUrl: string | undefined): Promise<void> {
  await app.start().catch((error: unknown) => {
    const platform = (error as { data?: { error?: string } }).data?.error;
    if (platform)
      throw new AppError(
        'slack_auth_failed',
        `Slack did not accept SLACK_APP_TOKEN (apps.connections.open: ${platform}); it must be an app-level token with the connections:write scope (Basic Information → App-Level Tokens)`,
        { cause: error },
      );
    const code = (error as { code?: string }).code;
    if (code && /^(slack_webapi_request_error|E[A-Z]+)$/.test(code))
      throw new AppError(
        'slack_unreachable',
        `Could not reach Slack at ${apiUrl ? redactUrl(apiUrl) : 'https://slack.com/api/'} to open the Socket Mode connection with SLACK_APP_TOKEN (${(error as { original?: { code?: string } }).original?.code ?? code}); check the network, a proxy, or SLACK_API_URL`,
        { cause: error },
      );
    throw error;
  });
}

/** The bot as auth.test describes it: its ids, and the scopes its token was granted. */
export interface BotIdentity {
  botId?: string;
  botUserId?: string;
  /** As Slack reports them with every answer (`x-oauth-scopes`); undefined when it did not say. */
  scopes?: string[];
}

/**
 * Checks the bot token once (auth.test): a wrong token stops the start with a clear message
 * instead of failing the first request, and the answer gives Bolt the bot's ids and the app its
 * granted scopes without asking again.
 */
export async function verifyBotToken(
  options: Pick<BoltAppOptions, 'botToken' | 'apiUrl' | 'logger' | 'timeoutMs' | 'slackBodies'>,
): Promise<BotIdentity> {
  const identity = await new WebClient(
    options.botToken,
    slackClientOptions('interactive', options),
  ).auth
    .test()
    .catch((error: unknown) => {
      const platform = (error as { data?: { error?: string } }).data?.error;
      // Slack answered and refused the token, or Slack could not be reached at all.
      if (platform)
        throw new AppError(
          'slack_auth_failed',
          `Slack did not accept SLACK_BOT_TOKEN (auth.test: ${platform})`,
        );
      const where = options.apiUrl ?? 'https://slack.com/api/';
      throw new AppError(
        'slack_unreachable',
        `Could not reach Slack at ${where} to check SLACK_BOT_TOKEN (${(error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error))}); check the network, a proxy, or SLACK_API_URL`,
      );
    });
  const scopes = identity.response_metadata?.scopes;
  return {
    ...(identity.bot_id ? { botId: identity.bot_id } : {}),
    ...(identity.user_id ? { botUserId: identity.user_id } : {}),
    ...(scopes ? { scopes } : {}),
  };
}

/**
 * The Bolt app without listeners: Socket Mode when an app token is given, HTTP mode otherwise.
 * In HTTP mode our receiver (http-receiver.ts) answers each request as soon as a listener
 * acknowledges, refuses requests whose signature is wrong or older than five minutes (401) and
 * malformed ones (400), and answers what no listener takes. In Socket Mode Bolt's receiver is
 * used with every envelope acknowledged the same way (socket-mode-receiver.ts).
 * For the bot `identity` describes (the token is checked here when it is not given).
 */
export async function createBoltApp(options: BoltAppOptions, identity?: BotIdentity): Promise<App> {
  const clientOptions = slackClientOptions('interactive', options);
  const bot = identity ?? (await verifyBotToken(options));
  const common = {
    token: options.botToken,
    ...(bot.botId ? { botId: bot.botId } : {}),
    ...(bot.botUserId ? { botUserId: bot.botUserId } : {}),
    logger: slackLogger(options),
    clientOptions,
  };
  const app = options.appToken
    ? new App({
        ...common,
        receiver: new AcknowledgingSocketModeReceiver({
          appToken: options.appToken,
          logger: common.logger,
          // apps.connections.open goes where every other Web API call goes (SLACK_API_URL).
          installerOptions: { clientOptions },
          appLogger: options.logger,
          ...(options.ackDeadlineMs ? { ackDeadlineMs: options.ackDeadlineMs } : {}),
        }),
      })
    : new App({
        ...common,
        receiver: new SlackHttpReceiver({
          signingSecret: options.signingSecret ?? '',
          logger: options.logger,
          routes: options.routes ?? [],
          ...(options.ackDeadlineMs ? { ackDeadlineMs: options.ackDeadlineMs } : {}),
        }),
      });

  // One log line per request: what it was, who sent it, how long the listeners took; and every
  // line its listeners write, then or after the ack, carries its request id.
  app.use(async ({ body, next }) => {
    const started = Date.now();
    const b = body as Record<string, unknown>;
    const kind = requestKind(b);
    const user = String(
      b.user_id ??
        (b.user as { id?: string } | undefined)?.id ??
        (b.event as { user?: string } | undefined)?.user ??
        '',
    );
    const id = requestId(b);
    await withLogContext(id ? { requestId: id } : {}, async () => {
      try {
        await (options.inFlight ? options.inFlight.track(next()) : next());
      } finally {
        options.logger.info({ kind, user, ms: Date.now() - started }, 'slack request');
      }
    });
  });
  // A listener's error goes back to the dispatch (acknowledged-dispatch.ts), which logs it and,
  // when nothing was acknowledged yet, answers a command with an apology. Swallowing it here
  // would make processEvent resolve, and the person would get an empty answer.
  app.error(async (error) => {
    // Bolt wraps a listener's error; the original tells whether it was routine.
    throw (error as { original?: unknown }).original ?? error;
  });
  return app;
}

/**
 * Whether the Socket Mode connection is up, for readiness; undefined in HTTP mode. Bolt builds the
 * Socket Mode receiver itself; its client reports connections as events.
 */
export function socketModeConnection(app: App): (() => boolean) | undefined {
  const client = (app as unknown as { receiver?: { client?: NodeJS.EventEmitter } }).receiver
    ?.client;
  if (!client || typeof client.on !== 'function') return undefined;
  let connected = false;
  client.on('connected', () => {
    connected = true;
  });
  for (const event of ['disconnected', 'reconnecting', 'disconnecting'])
    client.on(event, () => {
      connected = false;
    });
  return () => connected;
}

/**
 * Socket Mode: waits until every envelope received has been acknowledged, or until `deadline`
 * (epoch ms), so a stop closes the socket after the last answer; true at once in HTTP mode.
 */
export function socketModeAnswered(app: App, deadline: number): Promise<boolean> {
  const receiver = (app as unknown as { receiver?: unknown }).receiver;
  return receiver instanceof AcknowledgingSocketModeReceiver
    ? receiver.answered(deadline)
    : Promise.resolve(true);
}
