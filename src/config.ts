import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import { DEFAULT_WEB_LIST_PATH } from './approval-service/web-links.ts';
import { DEFAULT_CONFIRM_MS } from './approvals/step-confirmation.ts';
import {
  isKnownTimeZone,
  parseWorkingDays,
  parseWorkingHours,
  type WorkingHours,
} from './approvals/working-hours.ts';
import { AppError } from './errors.ts';
import { maskSecret, redactUrl } from './redact.ts';

/**
 * - `sandbox`: no Slack setting and no DATABASE_URL or APPROVAL_BASE_URL (or APP_MODE=sandbox,
 *   `npm start -- --sandbox`, which refuse those two); the app runs against a local stand-in of
 *   Slack, the embedded approval-service simulator and a database of its own, for trying it out on
 *   one machine.
 * - `socket`: Slack over Socket Mode (SLACK_APP_TOKEN), no public URL needed.
 * - `http`: Slack sends requests to /slack/events, verified with SLACK_SIGNING_SECRET.
 */
export type Mode = 'sandbox' | 'socket' | 'http';

export interface Config {
  mode: Mode;
  /**
   * Slack's port: /slack/events in HTTP mode, and the probes (/healthz, /readyz) unless `admin`
   * takes them. It never serves /metrics.
   */
  port: number;
  /** The interface to listen on; every one when unset (the sandbox uses 127.0.0.1 only). */
  host?: string;
  /**
   * The admin listener (ADMIN_PORT): /healthz, /readyz and /metrics, off Slack's port. Unset: no
   * admin listener, the probes stay on `port`, and /metrics is not served.
   */
  admin?: { port: number; host: string };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /**
   * Whether the debug lines of Slack's libraries that hold request and response bodies (titles,
   * notes, names, e-mails) are logged (LOG_SLACK_BODIES); off, debug logs carry none.
   */
  logSlackBodies: boolean;
  /**
   * The language of what the app posts where many read it (channels and their threads); what one
   * person reads (forms, DMs, ephemeral answers, Home) follows that person's Slack locale.
   */
  language: 'en' | 'zh';
  slack: {
    botToken?: string;
    signingSecret?: string;
    appToken?: string;
    /** Where the Web API is; Slack's own when unset. */
    apiUrl?: string;
    /** The longest one Web API call may take. */
    timeoutMs: number;
  };
  approval: {
    /** Unset only in the sandbox, which starts its own simulator. */
    baseUrl?: string;
    appName: string;
    appKey: string;
    webUrl?: string;
    /**
     * The route of the signed-in person's list of approvals on webUrl (APPROVAL_WEB_LIST_PATH),
     * where the approver's button leads: see approval-service/web-links.ts.
     */
    webListPath: string;
    timeoutMs: number;
    /** Characters the service's note column holds: 20,000, or 5,000 on installs that missed an update. */
    noteLimit: number;
    /**
     * The forward proxy's variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, either case), as set in
     * the environment or `.env`: every call to the service takes its proxy from these.
     */
    proxyEnv: Record<string, string>;
  };
  databaseUrl: string;
  /** Postgres only: connections in the pool, and how long one statement may run. */
  databasePool: { size: number; statementTimeoutMs: number };
  /** The sandbox's folder (SANDBOX_DATA_DIR), in sandbox mode only: its database is `sandbox.db` there. */
  sandboxDataDir?: string;
  poll: {
    cron: string;
    /** The hot pass's beat: approvals whose approver just went to decide; undefined: off. */
    hotCron: string | undefined;
    concurrency: number;
    /** The longest pause between two checks of one old approval. */
    maxIntervalMs: number;
    /** After this age an undecided approval is no longer followed (the service never expires one). */
    giveUpAfterMs: number;
    /** A pass claims no more approvals after this long. */
    passBudgetMs: number;
  };
  delivery: {
    /**
     * How long one attempt to post an announcement holds it. Another process (a replica, or this
     * one restarted after a crash) waits this long before it takes over an unfinished attempt.
     */
    leaseMs: number;
    /** Failures that may pass (Slack down, rate limits, database trouble) are retried this long. */
    retryForMs: number;
    /** Posts to one channel (or DM) at least this far apart; Slack allows about one per second. */
    channelIntervalMs: number;
    /**
     * The longest wait a 429's Retry-After is honoured for: a far-future value (from Slack or a
     * proxy) must not silence a channel past the retry window, with nothing failed or alerted.
     */
    retryAfterMaxMs: number;
    /**
     * After a post whose outcome is unknown (timeout, 5xx, a crash), Slack may still commit it
     * this long after the client gave up: until then the retry only searches for it, and posts
     * again only once a search after this horizon finds nothing.
     */
    commitHorizonMs: number;
    /** Channels served at the same time. */
    concurrency: number;
  };
  workflow: {
    /**
     * How long a requester has to confirm a workflow step that someone else ran before the step
     * ends with an error and nothing is started.
     */
    confirmMs: number;
  };
  /** Who may change a channel's request templates: its members, or the workspace's admins and owners. */
  templateManagers: 'members' | 'admins';
  /** Who may link a Slack person to a service login (src/approvals/account-links.ts). */
  accountLinking: 'self' | 'admin' | 'off';
  reminders: {
    /** A pending approval this old gets its first reminder. */
    afterMs: number;
    /** At least this long between two reminders. */
    intervalMs: number;
    /** At most this many reminders per approval; 0 switches reminders off. */
    max: number;
  };
  /**
   * After this many unanswered reminders the approver's leader gets one DM (ESCALATE_AFTER_REMINDERS);
   * 0 switches escalation off.
   */
  escalateAfterReminders: number;
  /**
   * When reminders and escalation may happen: inside the approver's working hours on working days,
   * in their own time zone (WORKING_HOURS, WORKING_DAYS, WORKING_TIME_ZONE); undefined
   * (`WORKING_HOURS=off`) on the clock, any hour of any day.
   */
  workingHours: WorkingHours | undefined;
  /** Days an ended approval and its announcements are kept; 0 keeps everything. */
  retentionDays: number;
  /**
   * /healthz fails once the outbox's delivery has had no answer from the database for this long
   * (LIVENESS_STALL_SECONDS).
   */
  livenessStallMs: number;
  shutdown: {
    /** On SIGTERM, how long work under way may take before the process closes regardless. */
    graceMs: number;
    /** On SIGTERM, how long requests a load balancer still sends are answered before the port closes. */
    drainMs: number;
  };
}

export class ConfigError extends AppError {
  readonly problems: string[];

  constructor(problems: string[]) {
    super('config_invalid', `The configuration is not usable:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

/**
 * The sandbox's own SQLite file, in SANDBOX_DATA_DIR (./data by default), emptied at each sandbox
 * start. The sandbox opens no other database: only the folder can be chosen, never the file.
 */
export const SANDBOX_DATABASE_FILE = 'sandbox.db';
const sandboxDataDir = './data';
const sandboxCredentials = { appName: 'slack-approvals', appKey: 'sandbox-app-key' };

// Each message says what the variable must be; loadConfig adds the variable's name and what was
// given (see `given`), so a problem reads "POLL_CONCURRENCY: must be …; was \"four\"".
const url = z.url({
  protocol: /^https?$/,
  error: 'must be an http(s) URL, e.g. https://approvals.example.com',
});
// Digits only: Number() would also take "1e3", "0x10", "0b1" or "4.0" and read them as numbers
// the documentation never names.
const integer = (min: number, max: number) => {
  const must = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+$/, { error: must })
    .transform(Number)
    .pipe(z.number().min(min, { error: must }).max(max, { error: must }));
};
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: `must be ${values.length === 2 ? values.join(' or ') : `one of ${values.join(', ')}`}`,
  });

/** Variables whose values are never shown, not even in an error about them. */
const SECRETS = new Set([
  'SLACK_BOT_TOKEN',
  'SLACK_SIGNING_SECRET',
  'SLACK_APP_TOKEN',
  'APPROVAL_APP_KEY',
  'DATABASE_URL',
  'SANDBOX_DATA_DIR',
]);

/**
 * What was given, as a problem may show it: a secret never (only a Slack token's type prefix,
 * which tells a user token from a bot token), a URL without its password, anything long cut.
 */
function given(name: string, value: string): string {
  if (SECRETS.has(name)) {
    const prefix = /^(xox[a-z]|xapp)-/.exec(value)?.[0];
    return prefix
      ? `was a value starting "${prefix}" (the rest is not shown: it is a secret)`
      : 'the value given is not shown: it is a secret';
  }
  const shown = value.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  return `was "${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown}"`;
}

const envSchema = z.object({
  APP_MODE: oneOf(['sandbox', 'http', 'socket']).optional(),
  APP_LANGUAGE: oneOf(['en', 'zh']).default('en'),
  SLACK_BOT_TOKEN: z.string().startsWith('xoxb-', 'must be a bot token (xoxb-…)').optional(),
  SLACK_SIGNING_SECRET: z.string().min(1).optional(),
  SLACK_APP_TOKEN: z.string().startsWith('xapp-', 'must be an app-level token (xapp-…)').optional(),
  SLACK_API_URL: url.optional(),
  SLACK_TIMEOUT_MS: integer(500, 60_000).default(10_000),
  PORT: integer(0, 65535).default(3000),
  HOST: z.string().min(1).optional(),
  ADMIN_PORT: integer(0, 65535).optional(),
  ADMIN_HOST: z.string().min(1).optional(),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).optional(),
  LOG_SLACK_BODIES: oneOf(['true', 'false']).default('false'),
  APPROVAL_BASE_URL: url.optional(),
  APPROVAL_APP_NAME: z.string().min(1).optional(),
  APPROVAL_APP_KEY: z.string().min(1).optional(),
  APPROVAL_WEB_URL: url.optional(),
  // A route or path on APPROVAL_WEB_URL, never another site: the button's target is the service.
  APPROVAL_WEB_LIST_PATH: z
    .string()
    .refine((v) => !/^[a-z][a-z0-9+.-]*:|^\/\/|\s/i.test(v), {
      error:
        'must be a route or path on APPROVAL_WEB_URL (e.g. #/approval/4000000000 or /ui/#/approval/0), not a URL',
    })
    .default(DEFAULT_WEB_LIST_PATH),
  APPROVAL_TIMEOUT_MS: integer(100, 120_000).default(10_000),
  APPROVAL_NOTE_LIMIT: integer(1, 65_535).default(20_000),
  DATABASE_URL: z.string().min(1).optional(),
  DATABASE_POOL_SIZE: integer(1, 500).optional(),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(0, 600_000).default(15_000),
  // A folder, never a URL: `postgres://…#` would otherwise make `…#/sandbox.db` a Postgres URL.
  // (The value is not echoed: it could hold a password.)
  SANDBOX_DATA_DIR: z
    .string()
    .min(1)
    .refine((v) => !/^[a-z][a-z0-9+.-]*:\/\//i.test(v) && !/[?#]/.test(v), {
      error: 'must be a folder, not a URL (no scheme://, ? or #)',
    })
    .optional(),
  STATUS_POLL_CRON: z
    .string()
    .refine((v) => validCron(v), 'must be a node-cron expression, e.g. "*/30 * * * * *"')
    .optional(),
  HOT_POLL_CRON: z
    .string()
    .refine((v) => v === 'off' || validCron(v), 'must be a node-cron expression or off')
    .default('*/5 * * * * *'),
  POLL_CONCURRENCY: integer(1, 64).default(4),
  POLL_MAX_INTERVAL_MINUTES: integer(1, 24 * 60).default(60),
  POLL_GIVE_UP_DAYS: integer(1, 3650).default(30),
  POLL_PASS_BUDGET_SECONDS: integer(1, 3600).default(20),
  // An attempt makes a few Web API calls of at most SLACK_TIMEOUT_MS each, none retried by itself.
  ANNOUNCEMENT_LEASE_SECONDS: integer(1, 3600).default(120),
  ANNOUNCEMENT_RETRY_HOURS: integer(1, 24 * 30).default(24),
  SLACK_CHANNEL_INTERVAL_MS: integer(0, 60_000).default(1000),
  SLACK_RETRY_AFTER_MAX_SECONDS: integer(1, 3600).default(300),
  SLACK_COMMIT_HORIZON_MS: integer(0, 600_000).default(60_000),
  DELIVERY_CONCURRENCY: integer(1, 64).default(4),
  REMINDER_AFTER_HOURS: integer(1, 24 * 365).optional(),
  REMINDER_INTERVAL_HOURS: integer(1, 24 * 365).optional(),
  REMINDER_MAX: integer(0, 100).default(3),
  ESCALATE_AFTER_REMINDERS: integer(0, 100).optional(),
  WORKING_HOURS: z
    .string()
    .refine(
      (v) => v.trim().toLowerCase() === 'off' || parseWorkingHours(v) !== undefined,
      'must be HH:MM-HH:MM (24-hour, the end after the start, e.g. 09:00-18:00), or off',
    )
    .default('09:00-18:00'),
  WORKING_DAYS: z
    .string()
    .refine(
      (v) => parseWorkingDays(v) !== undefined,
      'must name days (mon or monday, any case) or ranges of two days joined by a hyphen, separated by commas, e.g. mon-fri, sun-thu or mon,tue,thu',
    )
    .default('mon-fri'),
  WORKING_TIME_ZONE: z
    .string()
    .refine(isKnownTimeZone, 'must be an IANA time zone, e.g. Europe/Berlin or UTC')
    .default('UTC'),
  RETENTION_DAYS: integer(0, 36_500).optional(),
  SHUTDOWN_GRACE_MS: integer(1000, 600_000).default(25_000),
  SHUTDOWN_DRAIN_MS: integer(0, 60_000).optional(),
  LIVENESS_STALL_SECONDS: integer(5, 3600).default(300),
  TEMPLATE_MANAGERS: oneOf(['members', 'admins']).default('members'),
  ACCOUNT_LINKING: oneOf(['self', 'admin', 'off']).default('admin'),
  WORKFLOW_CONFIRM_MINUTES: integer(1, 24 * 60).default(DEFAULT_CONFIRM_MS / 60_000),
});

/**
 * The defaults that differ between a deployment and the sandbox, side by side: what a variable
 * left unset means in each. The sandbox's are for watching the app work on one machine.
 */
interface ModeDefaults {
  logLevel: Config['logLevel'];
  pollCron: string;
  reminderAfterMs: number;
  reminderIntervalMs: number;
  /** ESCALATE_AFTER_REMINDERS, given REMINDER_MAX. */
  escalateAfterReminders: (reminderMax: number) => number;
  drainMs: number;
  retentionDays: number;
}

const DEPLOYMENT_DEFAULTS: ModeDefaults = {
  logLevel: 'info',
  pollCron: '*/30 * * * * *',
  reminderAfterMs: 24 * 3_600_000,
  reminderIntervalMs: 24 * 3_600_000,
  // Off unless a workspace turns it on: a DM to someone's leader is the workspace's call, and an
  // upgrade must not start one for approvals already waiting.
  escalateAfterReminders: () => 0,
  drainMs: 2000,
  retentionDays: 400,
};

const SANDBOX_DEFAULTS: ModeDefaults = {
  // The terminal shows the one line to open and any warnings; set LOG_LEVEL for more.
  logLevel: 'warn',
  // Every 2 s, so a decision shows in the thread while you watch.
  pollCron: '*/2 * * * * *',
  // Minutes, not hours, so reminders and escalation can be watched: an undecided request is
  // reminded after a minute, then every minute, and escalated after two (when that many are sent).
  reminderAfterMs: 60_000,
  reminderIntervalMs: 60_000,
  escalateAfterReminders: (reminderMax) => Math.min(2, reminderMax),
  // No load balancer to notice readiness going 503.
  drainMs: 0,
  // Its data is fresh at each start anyway; a day shows the purge working.
  retentionDays: 1,
};

/** Every variable loadConfig reads; each is documented in .env.example and docs/configuration.md's settings table. */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** Whether `value` is a URL a forward proxy can have: http or https, with a host. */
function isProxyUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** The variables naming the forward proxy (a URL, maybe with its password), either case. */
const PROXY_URL_VARIABLES = new Set(['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy']);
/** Those and the hosts the proxy is not used for. */
const PROXY_VARIABLES = new Set([...PROXY_URL_VARIABLES, 'NO_PROXY', 'no_proxy']);

/**
 * Reads the configuration from an environment (process.env in main.ts). An empty variable counts
 * as unset. Every problem is reported at once, in one ConfigError naming each variable.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const set = Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1].trim() !== '',
    ),
  );
  const problems: string[] = [];
  const parsed = envSchema.safeParse(set);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path.join('.');
      const value = set[name];
      // SANDBOX_DATA_DIR's message already says why its value is not shown.
      const shown =
        value === undefined || name === 'SANDBOX_DATA_DIR' ? '' : `; ${given(name, value)}`;
      problems.push(`${name}: ${issue.message}${shown}`);
    }
  }
  const e = parsed.success ? parsed.data : undefined;
  const has = (name: string) => set[name] !== undefined;
  // Node's agent refuses a malformed proxy URL at start, quoting it password and all: said here
  // instead, the URL shown without its password.
  for (const name of PROXY_URL_VARIABLES) {
    const value = set[name];
    if (value !== undefined && !isProxyUrl(value))
      problems.push(
        `${name}: not a proxy URL (http://host:port or https://host:port); was ${redactUrl(value)}`,
      );
  }

  const slackNamed =
    has('SLACK_BOT_TOKEN') || has('SLACK_SIGNING_SECRET') || has('SLACK_APP_TOKEN');
  // The sandbox fails closed: a deployment whose Slack secrets went missing (a mistyped name)
  // must not run the sandbox against its real database or service.
  const deployment = has('DATABASE_URL') || has('APPROVAL_BASE_URL');
  const asked = set.APP_MODE;
  const mode: Mode =
    asked === 'sandbox' || (!slackNamed && !deployment && !asked)
      ? 'sandbox'
      : has('SLACK_APP_TOKEN') || asked === 'socket'
        ? 'socket'
        : 'http';
  // Nor does an explicit sandbox: it never opens a database or service it did not create (it would
  // drain a real outbox with its fake Slack and end real approvals as vanished).
  if (mode === 'sandbox' && deployment) {
    const named = ['DATABASE_URL', 'APPROVAL_BASE_URL'].filter(has).join(' and ');
    problems.push(
      `${named}: the sandbox refuses to start with ${named} set, since it only runs on a database and a simulator of its own; unset ${named} to run the sandbox (SANDBOX_DATA_DIR chooses the folder of its database)`,
    );
  }
  if (mode !== 'sandbox' && !slackNamed) {
    // The way to the sandbox from here: the sandbox refuses a deployment's settings, so they go.
    const deploymentSet = ['DATABASE_URL', 'APPROVAL_BASE_URL', ...(asked ? ['APP_MODE'] : [])]
      .filter(has)
      .join(' and ');
    const tryLocally = deployment
      ? `${deploymentSet} ${deploymentSet.includes(' and ') ? 'are' : 'is'} set, so this is not the sandbox; to try the app locally instead, unset ${deploymentSet} and run \`npm start\``
      : 'to try the app locally instead, run `npm start -- --sandbox` or set APP_MODE=sandbox';
    problems.push(
      `SLACK_BOT_TOKEN and ${mode === 'socket' ? 'SLACK_APP_TOKEN' : 'SLACK_SIGNING_SECRET'}: required to talk to Slack. ${tryLocally}`,
    );
  }
  if (slackNamed && mode !== 'sandbox') {
    if (!has('SLACK_BOT_TOKEN'))
      problems.push('SLACK_BOT_TOKEN: required to talk to Slack (xoxb-…)');
    if (mode === 'socket' && !has('SLACK_APP_TOKEN'))
      problems.push('SLACK_APP_TOKEN: required in Socket Mode (xapp-…)');
    if (mode === 'http' && !has('SLACK_SIGNING_SECRET'))
      problems.push(
        'SLACK_SIGNING_SECRET: required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)',
      );
    for (const name of ['APPROVAL_BASE_URL', 'APPROVAL_APP_NAME', 'APPROVAL_APP_KEY']) {
      if (!has(name)) problems.push(`${name}: required when connecting to Slack`);
    }
  }
  // The attempt's last call must end inside its lease (see the dispatcher), with room for work.
  if (e && e.ANNOUNCEMENT_LEASE_SECONDS * 1000 < 3 * e.SLACK_TIMEOUT_MS)
    problems.push(
      `ANNOUNCEMENT_LEASE_SECONDS: must be at least 3 × SLACK_TIMEOUT_MS (${Math.ceil((3 * e.SLACK_TIMEOUT_MS) / 1000)} s); was ${e.ANNOUNCEMENT_LEASE_SECONDS}`,
    );
  // 0 asks the system for a free port each, so only equal fixed ports collide.
  if (e?.ADMIN_PORT !== undefined && e.ADMIN_PORT !== 0 && e.ADMIN_PORT === e.PORT)
    problems.push(
      `ADMIN_PORT: must differ from PORT (${e.PORT}), which Slack reaches; the admin endpoints move off it`,
    );
  // A submission under way at SIGTERM must be carried to its end: its call to the service may take
  // APPROVAL_TIMEOUT_MS, then it is recorded.
  if (e && e.SHUTDOWN_GRACE_MS < e.APPROVAL_TIMEOUT_MS + 2000 + (e.SHUTDOWN_DRAIN_MS ?? 2000))
    problems.push(
      `SHUTDOWN_GRACE_MS: must be at least APPROVAL_TIMEOUT_MS + SHUTDOWN_DRAIN_MS + 2000 (${e.APPROVAL_TIMEOUT_MS + 2000 + (e.SHUTDOWN_DRAIN_MS ?? 2000)} ms), so a submission under way at a stop can finish; was ${e.SHUTDOWN_GRACE_MS}`,
    );
  // Escalation counts reminders: it can never come when fewer are sent.
  if (e?.ESCALATE_AFTER_REMINDERS !== undefined && e.ESCALATE_AFTER_REMINDERS > e.REMINDER_MAX)
    problems.push(
      `ESCALATE_AFTER_REMINDERS: must be at most REMINDER_MAX (${e.REMINDER_MAX}), since it counts reminders that went unanswered (0 turns escalation off); was ${e.ESCALATE_AFTER_REMINDERS}`,
    );
  if (problems.length > 0 || !e) throw new ConfigError(problems);
  const d = mode === 'sandbox' ? SANDBOX_DEFAULTS : DEPLOYMENT_DEFAULTS;

  return {
    mode,
    port: e.PORT,
    ...(e.HOST ? { host: e.HOST } : {}),
    // Loopback unless asked otherwise: metrics and probe details are for the operator, not Slack.
    // ADMIN_HOST alone is ignored, so a deployment can unset just ADMIN_PORT of the image's pair.
    ...(e.ADMIN_PORT !== undefined
      ? { admin: { port: e.ADMIN_PORT, host: e.ADMIN_HOST ?? '127.0.0.1' } }
      : {}),
    logLevel: e.LOG_LEVEL ?? d.logLevel,
    logSlackBodies: e.LOG_SLACK_BODIES === 'true',
    language: e.APP_LANGUAGE,
    slack: {
      ...(e.SLACK_BOT_TOKEN ? { botToken: e.SLACK_BOT_TOKEN } : {}),
      ...(e.SLACK_SIGNING_SECRET ? { signingSecret: e.SLACK_SIGNING_SECRET } : {}),
      ...(e.SLACK_APP_TOKEN ? { appToken: e.SLACK_APP_TOKEN } : {}),
      ...(e.SLACK_API_URL ? { apiUrl: e.SLACK_API_URL } : {}),
      timeoutMs: e.SLACK_TIMEOUT_MS,
    },
    approval: {
      ...(e.APPROVAL_BASE_URL ? { baseUrl: e.APPROVAL_BASE_URL } : {}),
      appName: e.APPROVAL_APP_NAME ?? sandboxCredentials.appName,
      appKey: e.APPROVAL_APP_KEY ?? sandboxCredentials.appKey,
      ...(e.APPROVAL_WEB_URL ? { webUrl: e.APPROVAL_WEB_URL } : {}),
      webListPath: e.APPROVAL_WEB_LIST_PATH,
      timeoutMs: e.APPROVAL_TIMEOUT_MS,
      noteLimit: e.APPROVAL_NOTE_LIMIT,
      // Read here with the rest, so a proxy named only in `.env` is used too (the client read
      // the process's environment, where `.env` never goes). Empty is unset, as Node reads it.
      proxyEnv: Object.fromEntries(
        Object.entries(set).filter(([name]) => PROXY_VARIABLES.has(name)),
      ),
    },
    // The sandbox's simulator and workspace live in memory, so it keeps its rows apart (and starts
    // them afresh: see sandbox.ts) instead of mixing them with a real deployment's.
    databaseUrl:
      mode === 'sandbox'
        ? `${(e.SANDBOX_DATA_DIR ?? sandboxDataDir).replace(/\/+$/, '')}/${SANDBOX_DATABASE_FILE}`
        : (e.DATABASE_URL ?? './data/approvals.db'),
    ...(mode === 'sandbox' ? { sandboxDataDir: e.SANDBOX_DATA_DIR ?? sandboxDataDir } : {}),
    poll: {
      cron: e.STATUS_POLL_CRON ?? d.pollCron,
      hotCron: e.HOT_POLL_CRON === 'off' ? undefined : e.HOT_POLL_CRON,
      concurrency: e.POLL_CONCURRENCY,
      maxIntervalMs: e.POLL_MAX_INTERVAL_MINUTES * 60_000,
      giveUpAfterMs: e.POLL_GIVE_UP_DAYS * 24 * 3_600_000,
      passBudgetMs: e.POLL_PASS_BUDGET_SECONDS * 1000,
    },
    delivery: {
      leaseMs: e.ANNOUNCEMENT_LEASE_SECONDS * 1000,
      retryForMs: e.ANNOUNCEMENT_RETRY_HOURS * 3_600_000,
      channelIntervalMs: e.SLACK_CHANNEL_INTERVAL_MS,
      retryAfterMaxMs: e.SLACK_RETRY_AFTER_MAX_SECONDS * 1000,
      commitHorizonMs: e.SLACK_COMMIT_HORIZON_MS,
      concurrency: e.DELIVERY_CONCURRENCY,
    },
    workflow: { confirmMs: e.WORKFLOW_CONFIRM_MINUTES * 60_000 },
    templateManagers: e.TEMPLATE_MANAGERS,
    accountLinking: e.ACCOUNT_LINKING,
    reminders: {
      afterMs:
        e.REMINDER_AFTER_HOURS !== undefined
          ? e.REMINDER_AFTER_HOURS * 3_600_000
          : d.reminderAfterMs,
      intervalMs:
        e.REMINDER_INTERVAL_HOURS !== undefined
          ? e.REMINDER_INTERVAL_HOURS * 3_600_000
          : d.reminderIntervalMs,
      max: e.REMINDER_MAX,
    },
    escalateAfterReminders: e.ESCALATE_AFTER_REMINDERS ?? d.escalateAfterReminders(e.REMINDER_MAX),
    workingHours: workingHoursOf(e.WORKING_HOURS, e.WORKING_DAYS, e.WORKING_TIME_ZONE),
    databasePool: {
      // Every poll and delivery worker may hold a connection at once, with room for the requests
      // Slack sends meanwhile: a pool smaller than the work queues queries behind each other.
      size: e.DATABASE_POOL_SIZE ?? e.POLL_CONCURRENCY + e.DELIVERY_CONCURRENCY + 6,
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    },
    livenessStallMs: e.LIVENESS_STALL_SECONDS * 1000,
    shutdown: {
      graceMs: e.SHUTDOWN_GRACE_MS,
      // Only a load balancer needs time to notice readiness went 503.
      drainMs: e.SHUTDOWN_DRAIN_MS ?? d.drainMs,
    },
    retentionDays: e.RETENTION_DAYS ?? d.retentionDays,
  };
}

/**
 * The configuration as it may be logged: secrets replaced by `***`, and the password of every URL
 * hidden (the database's, and a proxy's basic auth in the service's or Slack's, which axios and
 * Node's http send when the URL carries it).
 */
export function redactConfig(config: Config): Record<string, unknown> {
  const mask = maskSecret;
  const url = (value: string | undefined) => (value === undefined ? value : redactUrl(value));
  return {
    ...config,
    slack: {
      ...config.slack,
      botToken: mask(config.slack.botToken),
      signingSecret: mask(config.slack.signingSecret),
      appToken: mask(config.slack.appToken),
      apiUrl: url(config.slack.apiUrl),
    },
    approval: {
      ...config.approval,
      appKey: mask(config.approval.appKey),
      baseUrl: url(config.approval.baseUrl),
      webUrl: url(config.approval.webUrl),
      // A proxy's URL may carry its basic auth; NO_PROXY is a list of hosts.
      proxyEnv: Object.fromEntries(
        Object.entries(config.approval.proxyEnv).map(([name, value]) => [
          name,
          PROXY_URL_VARIABLES.has(name) ? redactUrl(value) : value,
        ]),
      ),
    },
    databaseUrl: redactUrl(config.databaseUrl),
  };
}

/**
 * The variables of a `.env` file, under the real environment: a variable set in the environment
 * wins over the file. Returns the environment unchanged when there is no file.
 */
export function withEnvFile(
  env: Record<string, string | undefined>,
  fileText: string | undefined,
): Record<string, string | undefined> {
  if (fileText === undefined) return env;
  return {
    ...parseEnv(fileText),
    ...Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)),
  };
}

/** The environment with `.env` of the working directory under it, when there is one. */
export function withDotEnv(
  env: Record<string, string | undefined>,
): Record<string, string | undefined> {
  return withEnvFile(env, existsSync('.env') ? readFileSync('.env', 'utf8') : undefined);
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
