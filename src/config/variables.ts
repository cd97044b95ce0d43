import { z } from 'zod';
import { DEFAULT_WEB_LIST_PATH } from '../approval-service/web-links.ts';
import { DEFAULT_CONFIRM_MS } from '../approvals/step-confirmation.ts';
import {
  isKnownTimeZone,
  parseWorkingDays,
  parseWorkingHours,
} from '../approvals/working-hours.ts';
import {
  cron,
  cronOrOff,
  DAY_MS,
  databaseUrl,
  duration,
  flag,
  HOUR_MS,
  httpUrl,
  integer,
  listenHost,
  noProxyList,
  oneOf,
  proxyUrl,
  text,
  token,
} from './fields.ts';

/**
 * Every variable the app reads, each with its reader and, where the default is the same in every
 * mode, its default. Those left without one are either read as unset by the rules (rules.ts) or
 * given their default by the mode (defaults.ts). Durations are read in milliseconds.
 */
export const SETTINGS = {
  APP_MODE: oneOf(['sandbox', 'http', 'socket']).optional(),
  APP_LANGUAGE: oneOf(['en', 'zh']).default('en'),
  SLACK_BOT_TOKEN: token('xoxb-', 'a bot token', { rotating: true }).optional(),
  SLACK_SIGNING_SECRET: text().optional(),
  SLACK_APP_TOKEN: token('xapp-', 'an app-level token').optional(),
  SLACK_API_URL: httpUrl().optional(),
  SLACK_TIMEOUT_MS: integer(500, 60_000).default(10_000),
  PORT: integer(0, 65535).default(3000),
  HOST: listenHost().optional(),
  ADMIN_PORT: integer(0, 65535).optional(),
  ADMIN_HOST: listenHost().optional(),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).optional(),
  LOG_SLACK_BODIES: flag().default(false),
  APPROVAL_BASE_URL: httpUrl().optional(),
  APPROVAL_APP_NAME: text().optional(),
  APPROVAL_APP_KEY: text().optional(),
  APPROVAL_WEB_URL: httpUrl().optional(),
  // A route or path on APPROVAL_WEB_URL, never another site: the button's target is the service.
  APPROVAL_WEB_LIST_PATH: z
    .string()
    .refine((v) => /^(#|\/(?!\/))\S*$/.test(v), {
      error:
        'must be a route or path on APPROVAL_WEB_URL, starting with # or / (e.g. #/approval/4000000000 or /ui/#/approval/0), not a URL',
    })
    .meta({ accepts: '`#/…` or `/…` on `APPROVAL_WEB_URL`' })
    .default(DEFAULT_WEB_LIST_PATH),
  APPROVAL_TIMEOUT_MS: integer(100, 120_000).default(10_000),
  APPROVAL_NOTE_LIMIT: integer(1, 65_535).default(20_000),
  DATABASE_URL: databaseUrl().optional(),
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
    .meta({ accepts: 'a folder (no `scheme://`, `?` or `#`)' })
    .optional(),
  STATUS_POLL_CRON: cron().optional(),
  HOT_POLL_CRON: cronOrOff().default('*/5 * * * * *'),
  POLL_CONCURRENCY: integer(1, 64).default(4),
  POLL_MAX_INTERVAL_MINUTES: duration(1, 24 * 60, 'minutes').default(HOUR_MS),
  POLL_GIVE_UP_DAYS: duration(1, 3650, 'days').default(30 * DAY_MS),
  POLL_PASS_BUDGET_SECONDS: duration(1, 3600, 'seconds').default(20_000),
  // An attempt makes a few Web API calls of at most SLACK_TIMEOUT_MS each, none retried by itself.
  ANNOUNCEMENT_LEASE_SECONDS: duration(1, 3600, 'seconds').default(120_000),
  ANNOUNCEMENT_RETRY_HOURS: duration(1, 24 * 30, 'hours').default(DAY_MS),
  SLACK_CHANNEL_INTERVAL_MS: integer(0, 60_000).default(1000),
  SLACK_RETRY_AFTER_MAX_SECONDS: duration(1, 3600, 'seconds').default(300_000),
  SLACK_COMMIT_HORIZON_MS: integer(0, 600_000).default(60_000),
  DELIVERY_CONCURRENCY: integer(1, 64).default(4),
  REMINDER_AFTER_HOURS: duration(1, 24 * 365, 'hours').optional(),
  REMINDER_INTERVAL_HOURS: duration(1, 24 * 365, 'hours').optional(),
  REMINDER_MAX: integer(0, 100).default(3),
  ESCALATE_AFTER_REMINDERS: integer(0, 100).optional(),
  WORKING_HOURS: z
    .string()
    .refine(
      (v) => v.trim().toLowerCase() === 'off' || parseWorkingHours(v) !== undefined,
      'must be HH:MM-HH:MM (24-hour, the end after the start, e.g. 09:00-18:00), or off',
    )
    .meta({ accepts: '`HH:MM-HH:MM`, or `off`' })
    .default('09:00-18:00'),
  WORKING_DAYS: z
    .string()
    .refine(
      (v) => parseWorkingDays(v) !== undefined,
      'must name days (mon or monday, any case) or ranges of two days joined by a hyphen, separated by commas, e.g. mon-fri, sun-thu or mon,tue,thu',
    )
    .meta({ accepts: 'days and day ranges separated by commas' })
    .default('mon-fri'),
  WORKING_TIME_ZONE: z
    .string()
    // A name, not an offset: "+01:00" is a zone to Intl, but one without daylight saving time,
    // an hour off half the year for anyone who meant Berlin.
    .refine(
      (v) => /^[a-z]/i.test(v) && isKnownTimeZone(v),
      'must be an IANA time zone, e.g. Europe/Berlin or UTC (a name, not an offset such as +01:00, which never follows daylight saving time)',
    )
    .meta({ accepts: 'IANA time zone name' })
    .default('UTC'),
  RETENTION_DAYS: integer(0, 36_500).optional(),
  SHUTDOWN_GRACE_MS: integer(1000, 600_000).default(25_000),
  SHUTDOWN_DRAIN_MS: integer(0, 60_000).optional(),
  LIVENESS_STALL_SECONDS: duration(5, 3600, 'seconds').default(300_000),
  TEMPLATE_MANAGERS: oneOf(['members', 'admins']).default('members'),
  ACCOUNT_LINKING: oneOf(['self', 'admin', 'off']).default('admin'),
  WORKFLOW_CONFIRM_MINUTES: duration(1, 24 * 60, 'minutes').default(DEFAULT_CONFIRM_MS),
};

/**
 * The forward proxy's variables, in either case as Node reads them: every call to the approval
 * service takes its proxy from these (read here with the rest, so a proxy named only in `.env` is
 * used too). Documented in docs/configuration.md beside the settings, not in .env.example.
 */
export const PROXY_SETTINGS = {
  HTTP_PROXY: proxyUrl().optional(),
  http_proxy: proxyUrl().optional(),
  HTTPS_PROXY: proxyUrl().optional(),
  https_proxy: proxyUrl().optional(),
  NO_PROXY: noProxyList().optional(),
  no_proxy: noProxyList().optional(),
};

/** The proxy's variables, named once (PROXY_SETTINGS): the lower-case one after each upper. */
export const PROXY_VARIABLES = Object.keys(
  PROXY_SETTINGS,
) as readonly (keyof typeof PROXY_SETTINGS)[];

/** The variables whose value is a proxy's URL (maybe with its password). */
export const PROXY_URL_VARIABLES: ReadonlySet<string> = new Set(
  PROXY_VARIABLES.filter((name) => name.toUpperCase() !== 'NO_PROXY'),
);

export const variables = z.object({ ...SETTINGS, ...PROXY_SETTINGS });

/** The variables as read: each present one parsed, the mode-independent defaults filled in. */
export type Given = z.output<typeof variables>;
export type Variable = keyof Given;
