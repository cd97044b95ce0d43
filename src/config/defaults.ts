import { DAY_MS } from './fields.ts';
import type { Mode } from './mode.ts';
import type { Given } from './variables.ts';

/**
 * The variables whose default depends on the mode: what each left unset means in a deployment,
 * and the sandbox's overlay over that, side by side. They are applied over what was given after
 * the rules were checked (rules.ts reads whether ESCALATE_AFTER_REMINDERS or SHUTDOWN_DRAIN_MS was
 * set), in the units the app uses (milliseconds): the sandbox reminds every minute, below the
 * whole hours REMINDER_AFTER_HOURS accepts.
 */
type ModeDependent =
  | 'LOG_LEVEL'
  | 'STATUS_POLL_CRON'
  | 'REMINDER_AFTER_HOURS'
  | 'REMINDER_INTERVAL_HOURS'
  | 'ESCALATE_AFTER_REMINDERS'
  | 'SHUTDOWN_DRAIN_MS'
  | 'RETENTION_DAYS';
export type ModeDefaults = { [K in ModeDependent]-?: NonNullable<Given[K]> };

export const DEPLOYMENT_DEFAULTS: ModeDefaults = {
  LOG_LEVEL: 'info',
  STATUS_POLL_CRON: '*/30 * * * * *',
  REMINDER_AFTER_HOURS: DAY_MS,
  REMINDER_INTERVAL_HOURS: DAY_MS,
  // Off unless a workspace turns it on: a DM to someone's leader is the workspace's call, and an
  // upgrade must not start one for approvals already waiting.
  ESCALATE_AFTER_REMINDERS: 0,
  SHUTDOWN_DRAIN_MS: 2000,
  RETENTION_DAYS: 400,
};

/** Where the sandbox differs: for watching the app work on one machine. */
export const SANDBOX_DEFAULTS: Partial<ModeDefaults> = {
  // The terminal shows the one line to open and any warnings; set LOG_LEVEL for more.
  LOG_LEVEL: 'warn',
  // Every 2 s, so a decision shows in the thread while you watch.
  STATUS_POLL_CRON: '*/2 * * * * *',
  // Minutes, not hours, so reminders and escalation can be watched: an undecided request is
  // reminded after a minute, then every minute, and escalated after two (or after REMINDER_MAX,
  // when fewer are sent).
  REMINDER_AFTER_HOURS: 60_000,
  REMINDER_INTERVAL_HOURS: 60_000,
  ESCALATE_AFTER_REMINDERS: 2,
  // No load balancer to notice readiness going 503.
  SHUTDOWN_DRAIN_MS: 0,
  // Its data is fresh at each start anyway; a day shows the purge working.
  RETENTION_DAYS: 1,
};

/** The mode's defaults for the variables that depend on it. */
export const defaultsOf = (mode: Mode): ModeDefaults =>
  mode === 'sandbox' ? { ...DEPLOYMENT_DEFAULTS, ...SANDBOX_DEFAULTS } : DEPLOYMENT_DEFAULTS;

/** What was given, over the mode's defaults. */
export function withModeDefaults(mode: Mode, given: Given): Given & ModeDefaults {
  const set = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
  return { ...given, ...defaultsOf(mode), ...set };
}
