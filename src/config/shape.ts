import {
  parseWorkingDays,
  parseWorkingHours,
  type WorkingHours,
} from '../approvals/working-hours.ts';
import type { ModeDefaults } from './defaults.ts';
import type { Mode } from './mode.ts';
import { type Given, PROXY_VARIABLES } from './variables.ts';

/**
 * The settings as the app uses them, grouped, built from the variables once they passed the rules
 * and the mode's defaults filled in. This is the one definition of their shape: `Config` is what
 * `configOf` returns, and the comments on each field here are the ones callers see. Durations
 * arrive in milliseconds whatever unit the variable's name gives (`WORKFLOW_CONFIRM_MINUTES` is
 * read as ms): see `duration` in fields.ts.
 */
type Settings = Given & ModeDefaults;

/**
 * The sandbox's own SQLite file, in SANDBOX_DATA_DIR (./data by default), emptied at each sandbox
 * start. The sandbox opens no other database: only the folder can be chosen, never the file.
 */
export const SANDBOX_DATABASE_FILE = 'sandbox.db';
const SANDBOX_DATA_DIR = './data';
/** The embedded simulator's: APPROVAL_APP_NAME and APPROVAL_APP_KEY are required outside the sandbox. */
const SIMULATOR_CREDENTIALS = { appName: 'slack-approvals', appKey: 'sandbox-app-key' };

export function configOf(mode: Mode, e: Settings) {
  return {
    mode,
    ...listenersOf(e),
    logLevel: e.LOG_LEVEL,
    /**
     * Whether the debug lines of Slack's libraries that hold request and response bodies (titles,
     * notes, names, e-mails) are logged (LOG_SLACK_BODIES); off, debug logs carry none.
     */
    logSlackBodies: e.LOG_SLACK_BODIES,
    /**
     * The language of what the app posts where many read it (channels and their threads); what one
     * person reads (forms, DMs, ephemeral answers, Home) follows that person's Slack locale.
     */
    language: e.APP_LANGUAGE,
    slack: slackOf(e),
    approval: approvalOf(e),
    ...storageOf(mode, e),
    poll: pollOf(e),
    delivery: deliveryOf(e),
    workflow: {
      /**
       * How long a requester has to confirm a workflow step that someone else ran before the step
       * ends with an error and nothing is started.
       */
      confirmMs: e.WORKFLOW_CONFIRM_MINUTES,
    },
    /** Who may change a channel's request templates: its members, or the workspace's admins and owners. */
    templateManagers: e.TEMPLATE_MANAGERS,
    /** Who may link a Slack person to a service login (src/approvals/account-links.ts). */
    accountLinking: e.ACCOUNT_LINKING,
    ...followUpOf(e),
    /** Days an ended approval and its announcements are kept; 0 keeps everything. */
    retentionDays: e.RETENTION_DAYS,
    /**
     * /healthz fails once the outbox's delivery has had no answer from the database for this long
     * (LIVENESS_STALL_SECONDS).
     */
    livenessStallMs: e.LIVENESS_STALL_SECONDS,
    shutdown: {
      /** On SIGTERM, how long work under way may take before the process closes regardless. */
      graceMs: e.SHUTDOWN_GRACE_MS,
      /** On SIGTERM, how long requests a load balancer still sends are answered before the port closes. */
      drainMs: e.SHUTDOWN_DRAIN_MS,
    },
  };
}

function listenersOf(e: Settings) {
  return {
    /**
     * Slack's port: /slack/events in HTTP mode, and the probes (/healthz, /readyz) unless `admin`
     * takes them. It never serves /metrics.
     */
    port: e.PORT,
    /** The interface to listen on; every one when unset (the sandbox uses 127.0.0.1 only). */
    ...(e.HOST ? { host: e.HOST } : {}),
    // Loopback unless asked otherwise: metrics and probe details are for the operator, not Slack.
    // ADMIN_HOST alone is ignored, so a deployment can unset just ADMIN_PORT of the image's pair.
    /**
     * The admin listener (ADMIN_PORT): /healthz, /readyz and /metrics, off Slack's port. Unset: no
     * admin listener, the probes stay on `port`, and /metrics is not served.
     */
    ...(e.ADMIN_PORT !== undefined
      ? { admin: { port: e.ADMIN_PORT, host: e.ADMIN_HOST ?? '127.0.0.1' } }
      : {}),
  };
}

function slackOf(e: Settings) {
  return {
    ...(e.SLACK_BOT_TOKEN ? { botToken: e.SLACK_BOT_TOKEN } : {}),
    ...(e.SLACK_SIGNING_SECRET ? { signingSecret: e.SLACK_SIGNING_SECRET } : {}),
    ...(e.SLACK_APP_TOKEN ? { appToken: e.SLACK_APP_TOKEN } : {}),
    /** Where the Web API is; Slack's own when unset. */
    ...(e.SLACK_API_URL ? { apiUrl: e.SLACK_API_URL } : {}),
    /** The longest one Web API call may take. */
    timeoutMs: e.SLACK_TIMEOUT_MS,
  };
}

function approvalOf(e: Settings) {
  return {
    /** Unset only in the sandbox, which starts its own simulator. */
    ...(e.APPROVAL_BASE_URL ? { baseUrl: e.APPROVAL_BASE_URL } : {}),
    appName: e.APPROVAL_APP_NAME ?? SIMULATOR_CREDENTIALS.appName,
    appKey: e.APPROVAL_APP_KEY ?? SIMULATOR_CREDENTIALS.appKey,
    ...(e.APPROVAL_WEB_URL ? { webUrl: e.APPROVAL_WEB_URL } : {}),
    /**
     * The route of the signed-in person's list of approvals on webUrl (APPROVAL_WEB_LIST_PATH),
     * where the approver's button leads: see approval-service/web-links.ts.
     */
    webListPath: e.APPROVAL_WEB_LIST_PATH,
    timeoutMs: e.APPROVAL_TIMEOUT_MS,
    /** Characters the service's note column holds: 20,000, or 5,000 on installs that missed an update. */
    noteLimit: e.APPROVAL_NOTE_LIMIT,
    /**
     * The forward proxy's variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, either case), as set in
     * the environment or `.env`: every call to the service takes its proxy from these. Empty is
     * unset, as Node reads it.
     */
    proxyEnv: Object.fromEntries(
      PROXY_VARIABLES.flatMap((name) => (e[name] === undefined ? [] : [[name, e[name]]])),
    ) as Record<string, string>,
  };
}

/**
 * Where the rows live. The sandbox's simulator and workspace live in memory, so it keeps its rows
 * apart (and starts them afresh: see sandbox.ts) instead of mixing them with a real deployment's;
 * SANDBOX_DATA_DIR means nothing outside it.
 */
function storageOf(mode: Mode, e: Settings) {
  const sandboxDataDir = mode === 'sandbox' ? (e.SANDBOX_DATA_DIR ?? SANDBOX_DATA_DIR) : undefined;
  return {
    databaseUrl:
      sandboxDataDir === undefined
        ? (e.DATABASE_URL ?? './data/approvals.db')
        : `${sandboxDataDir.replace(/\/+$/, '')}/${SANDBOX_DATABASE_FILE}`,
    /** The sandbox's folder (SANDBOX_DATA_DIR), in sandbox mode only: its database is `sandbox.db` there. */
    ...(sandboxDataDir === undefined ? {} : { sandboxDataDir }),
    /** Postgres only: connections in the pool, and how long one statement may run. */
    databasePool: {
      // Every poll and delivery worker may hold a connection at once, with room for the requests
      // Slack sends meanwhile: a pool smaller than the work queues queries behind each other.
      size: e.DATABASE_POOL_SIZE ?? e.POLL_CONCURRENCY + e.DELIVERY_CONCURRENCY + 6,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    },
  };
}

function pollOf(e: Settings) {
  return {
    cron: e.STATUS_POLL_CRON,
    /** The hot pass's beat: approvals whose approver just went to decide; undefined: off. */
    hotCron: e.HOT_POLL_CRON === 'off' ? undefined : e.HOT_POLL_CRON,
    concurrency: e.POLL_CONCURRENCY,
    /** The longest pause between two checks of one old approval. */
    maxIntervalMs: e.POLL_MAX_INTERVAL_MINUTES,
    /** After this age an undecided approval is no longer followed (the service never expires one). */
    giveUpAfterMs: e.POLL_GIVE_UP_DAYS,
    /** A pass claims no more approvals after this long. */
    passBudgetMs: e.POLL_PASS_BUDGET_SECONDS,
  };
}

function deliveryOf(e: Settings) {
  return {
    /**
     * How long one attempt to post an announcement holds it. Another process (a replica, or this
     * one restarted after a crash) waits this long before it takes over an unfinished attempt.
     */
    leaseMs: e.ANNOUNCEMENT_LEASE_SECONDS,
    /** Failures that may pass (Slack down, rate limits, database trouble) are retried this long. */
    retryForMs: e.ANNOUNCEMENT_RETRY_HOURS,
    /** Posts to one channel (or DM) at least this far apart; Slack allows about one per second. */
    channelIntervalMs: e.SLACK_CHANNEL_INTERVAL_MS,
    /**
     * The longest wait a 429's Retry-After is honoured for: a far-future value (from Slack or a
     * proxy) must not silence a channel past the retry window, with nothing failed or alerted.
     */
    retryAfterMaxMs: e.SLACK_RETRY_AFTER_MAX_SECONDS,
    /**
     * After a post whose outcome is unknown (timeout, 5xx, a crash), Slack may still commit it
     * this long after the client gave up: until then the retry only searches for it, and posts
     * again only once a search after this horizon finds nothing.
     */
    commitHorizonMs: e.SLACK_COMMIT_HORIZON_MS,
    /** Channels served at the same time. */
    concurrency: e.DELIVERY_CONCURRENCY,
  };
}

/** Reminders, escalation and the working hours they keep to. */
function followUpOf(e: Settings) {
  return {
    reminders: {
      /** A pending approval this old gets its first reminder. */
      afterMs: e.REMINDER_AFTER_HOURS,
      /** At least this long between two reminders. */
      intervalMs: e.REMINDER_INTERVAL_HOURS,
      /** At most this many reminders per approval; 0 switches reminders off. */
      max: e.REMINDER_MAX,
    },
    /**
     * After this many unanswered reminders the approver's leader gets one DM (ESCALATE_AFTER_REMINDERS);
     * 0 switches escalation off. A value given above REMINDER_MAX was refused by the rules, so this
     * lowers only the sandbox's default, to the reminders that are sent.
     */
    escalateAfterReminders: Math.min(e.ESCALATE_AFTER_REMINDERS, e.REMINDER_MAX),
    /**
     * When reminders and escalation may happen: inside the approver's working hours on working days,
     * in their own time zone (WORKING_HOURS, WORKING_DAYS, WORKING_TIME_ZONE); undefined
     * (`WORKING_HOURS=off`) on the clock, any hour of any day.
     */
    workingHours: workingHoursOf(e.WORKING_HOURS, e.WORKING_DAYS, e.WORKING_TIME_ZONE),
  };
}

/** The working-hours settings, already checked by the schema; undefined when `off`. */
export function workingHoursOf(
  hours: string,
  days: string,
  timeZone: string,
): WorkingHours | undefined {
  if (hours.trim().toLowerCase() === 'off') return undefined;
  const range = parseWorkingHours(hours);
  const weekdays = parseWorkingDays(days);
  if (!range || !weekdays) return undefined;
  return { ...range, days: weekdays, defaultTimeZone: timeZone };
}
