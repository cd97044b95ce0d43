import type { Given } from './variables.ts';

/**
 * - `sandbox`: no Slack setting and no DATABASE_URL or APPROVAL_BASE_URL (or APP_MODE=sandbox,
 *   `npm start -- --sandbox`, which refuse those two); the app runs against a local stand-in of
 *   Slack, the embedded approval-service simulator and a database of its own, for trying it out on
 *   one machine.
 * - `socket`: Slack over Socket Mode (SLACK_APP_TOKEN), no public URL needed.
 * - `http`: Slack sends requests to /slack/events, verified with SLACK_SIGNING_SECRET.
 */
export type Mode = 'sandbox' | 'socket' | 'http';

/** The variables whose presence chooses the mode, as set (a present value may still be refused). */
type Presence = Partial<Record<keyof Given, unknown>>;

const isSet = (given: Presence, name: keyof Given) => given[name] !== undefined;

/** Whether any Slack setting is there: then this is meant to talk to Slack. */
export const slackNamed = (given: Presence) =>
  isSet(given, 'SLACK_BOT_TOKEN') ||
  isSet(given, 'SLACK_SIGNING_SECRET') ||
  isSet(given, 'SLACK_APP_TOKEN');

/** The settings of a deployment: the sandbox never runs with them (it would use real data). */
export const DEPLOYMENT_VARIABLES = ['DATABASE_URL', 'APPROVAL_BASE_URL'] as const;

export const deploymentNamed = (given: Presence) =>
  DEPLOYMENT_VARIABLES.some((name) => isSet(given, name));

/**
 * The mode the variables set ask for. The sandbox fails closed: a deployment whose Slack secrets
 * went missing (a mistyped name) is not the sandbox, and the rules then say what is missing.
 */
export function modeOf(set: Record<string, string>): Mode {
  const asked = set.APP_MODE;
  if (asked === 'sandbox' || (!slackNamed(set) && !deploymentNamed(set) && !asked))
    return 'sandbox';
  return set.SLACK_APP_TOKEN !== undefined || asked === 'socket' ? 'socket' : 'http';
}
