import { BlockList, isIP } from 'node:net';
import type { z } from 'zod';
import { defaultsOf } from './defaults.ts';
import { addressRangeOf } from './fields.ts';
import { DEPLOYMENT_VARIABLES, deploymentNamed, type Mode, slackNamed } from './mode.ts';
import { type Given, PROXY_VARIABLES, type Variable } from './variables.ts';

/**
 * The rules between variables, checked on what was given (before the mode's defaults fill in the
 * rest) as refinements of the schema. Each problem names the variables to change: the issue's
 * `path` is the first, `params.variables` all of them, and the message says the rest.
 */
export interface Broken {
  variables: readonly Variable[];
  message: string;
}

interface Rule {
  /**
   * The variables whose values it compares: it is checked only once each was read without a
   * problem (a problem about a value is reported on its own). A rule about which variables are set
   * reads none: whether a variable is there is known even when its value is refused.
   */
  reads: readonly Variable[];
  broken(given: Given, mode: Mode): Broken[];
}

const isSet = (given: Given, name: Variable) => given[name] !== undefined;
const named = (names: readonly string[]) => names.join(' and ');

/** The sandbox never opens a database or service it did not create (it would drain a real outbox with its fake Slack and end real approvals as vanished). */
const sandboxRefusesDeployment: Rule = {
  reads: [],
  broken(given, mode) {
    const set = DEPLOYMENT_VARIABLES.filter((name) => isSet(given, name));
    if (mode !== 'sandbox' || set.length === 0) return [];
    return [
      {
        variables: set,
        message: `the sandbox refuses to start with ${named(set)} set, since it only runs on a database and a simulator of its own; unset ${named(set)} to run the sandbox (SANDBOX_DATA_DIR chooses the folder of its database)`,
      },
    ];
  },
};

/** Outside the sandbox the app talks to Slack; without any Slack setting, say the way to the sandbox too. */
const slackRequired: Rule = {
  reads: [],
  broken(given, mode) {
    if (mode === 'sandbox' || slackNamed(given)) return [];
    // The sandbox refuses a deployment's settings, so the way there unsets them.
    const deploymentSet = [
      ...DEPLOYMENT_VARIABLES,
      ...(isSet(given, 'APP_MODE') ? (['APP_MODE'] as const) : []),
    ].filter((name) => isSet(given, name));
    const tryLocally = deploymentNamed(given)
      ? `${named(deploymentSet)} ${deploymentSet.length > 1 ? 'are' : 'is'} set, so this is not the sandbox; to try the app locally instead, unset ${named(deploymentSet)} and run \`npm start\``
      : 'to try the app locally instead, run `npm start -- --sandbox` or set APP_MODE=sandbox';
    return [
      {
        variables: [
          'SLACK_BOT_TOKEN',
          mode === 'socket' ? 'SLACK_APP_TOKEN' : 'SLACK_SIGNING_SECRET',
        ],
        message: `required to talk to Slack. ${tryLocally}`,
      },
    ];
  },
};

/** With some Slack setting, every one the mode needs, and the approval service's. */
const slackComplete: Rule = {
  reads: [],
  broken(given, mode) {
    if (mode === 'sandbox' || !slackNamed(given)) return [];
    const required: Array<[Variable, string]> = [
      ['SLACK_BOT_TOKEN', 'required to talk to Slack (xoxb-…)'],
      mode === 'socket'
        ? ['SLACK_APP_TOKEN', 'required in Socket Mode (xapp-…)']
        : [
            'SLACK_SIGNING_SECRET',
            'required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)',
          ],
      ['APPROVAL_BASE_URL', 'required when connecting to Slack'],
      ['APPROVAL_APP_NAME', 'required when connecting to Slack'],
      ['APPROVAL_APP_KEY', 'required when connecting to Slack'],
    ];
    return required
      .filter(([name]) => !isSet(given, name))
      .map(([name, message]) => ({ variables: [name], message }));
  },
};

/** The attempt's last call must end inside its lease (see the dispatcher), with room for work. */
const leaseOutlastsSlackCalls: Rule = {
  reads: ['ANNOUNCEMENT_LEASE_SECONDS', 'SLACK_TIMEOUT_MS'],
  broken({ ANNOUNCEMENT_LEASE_SECONDS: lease, SLACK_TIMEOUT_MS: timeout }) {
    if (lease >= 3 * timeout) return [];
    return [
      {
        variables: ['ANNOUNCEMENT_LEASE_SECONDS'],
        message: `must be at least 3 × SLACK_TIMEOUT_MS (${Math.ceil((3 * timeout) / 1000)} s); was ${lease / 1000}`,
      },
    ];
  },
};

/** The admin endpoints move off the port Slack reaches; 0 asks the system for a free port each, so only equal fixed ports collide. */
const adminPortApart: Rule = {
  reads: ['ADMIN_PORT', 'PORT'],
  broken({ ADMIN_PORT: admin, PORT: port }) {
    if (admin === undefined || admin === 0 || admin !== port) return [];
    return [
      {
        variables: ['ADMIN_PORT'],
        message: `must differ from PORT (${port}), which Slack reaches; the admin endpoints move off it`,
      },
    ];
  },
};

/**
 * A submission under way at SIGTERM must be carried to its end: its call to the service may take
 * APPROVAL_TIMEOUT_MS, then it is recorded.
 */
const graceFinishesASubmission: Rule = {
  reads: ['SHUTDOWN_GRACE_MS', 'APPROVAL_TIMEOUT_MS', 'SHUTDOWN_DRAIN_MS'],
  broken(given, mode) {
    const drain = given.SHUTDOWN_DRAIN_MS ?? defaultsOf(mode).SHUTDOWN_DRAIN_MS;
    const least = given.APPROVAL_TIMEOUT_MS + drain + 2000;
    if (given.SHUTDOWN_GRACE_MS >= least) return [];
    return [
      {
        variables: ['SHUTDOWN_GRACE_MS'],
        message: `must be at least APPROVAL_TIMEOUT_MS + SHUTDOWN_DRAIN_MS + 2000 (${least} ms), so a submission under way at a stop can finish; was ${given.SHUTDOWN_GRACE_MS}`,
      },
    ];
  },
};

/** Escalation counts reminders: it can never come when fewer are sent. */
const escalationWithinReminders: Rule = {
  reads: ['ESCALATE_AFTER_REMINDERS', 'REMINDER_MAX'],
  broken({ ESCALATE_AFTER_REMINDERS: after, REMINDER_MAX: max }) {
    if (after === undefined || after <= max) return [];
    return [
      {
        variables: ['ESCALATE_AFTER_REMINDERS'],
        message: `must be at most REMINDER_MAX (${max}), since it counts reminders that went unanswered (0 turns escalation off); was ${after}`,
      },
    ];
  },
};

/**
 * Node's agents and undici match no address range in NO_PROXY: one that holds the service's own
 * address would send its calls through the proxy all the same. (A range matches no host name, so
 * a service reached by name is not concerned.) The lower-case variables first, as both read them.
 */
const serviceOutsideRanges: Rule = {
  reads: ['APPROVAL_BASE_URL', ...PROXY_VARIABLES],
  broken(given) {
    if (given.APPROVAL_BASE_URL === undefined) return [];
    const url = new URL(given.APPROVAL_BASE_URL);
    const address = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const https = url.protocol === 'https:';
    const proxy = https
      ? (given.https_proxy ?? given.HTTPS_PROXY)
      : (given.http_proxy ?? given.HTTP_PROXY);
    const name = given.no_proxy !== undefined ? 'no_proxy' : 'NO_PROXY';
    const entries = (given[name] ?? '').split(',').map((entry) => entry.trim());
    if (isIP(address) === 0 || proxy === undefined || entries.includes(address)) return [];
    return entries.flatMap((entry) => {
      const range = addressRangeOf(entry);
      if (range === undefined) return [];
      const block = new BlockList();
      block.addSubnet(range.address, range.prefix, range.family);
      if (!block.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6')) return [];
      return [
        {
          variables: [name],
          message: `the range ${entry} holds APPROVAL_BASE_URL's address ${address}, but the proxy agents match no ranges, so the service would be called through the proxy: add ${address} itself`,
        },
      ];
    });
  },
};

const RULES: readonly Rule[] = [
  sandboxRefusesDeployment,
  slackRequired,
  slackComplete,
  leaseOutlastsSlackCalls,
  adminPortApart,
  graceFinishesASubmission,
  escalationWithinReminders,
  serviceOutsideRanges,
];

/** The rules as one refinement of the variables' schema, for a mode: every broken one is an issue. */
export function rulesOf(mode: Mode) {
  return (payload: z.core.ParsePayload<Given>) => {
    const refused = new Set(payload.issues.map((issue) => issue.path?.[0]));
    for (const rule of RULES) {
      if (rule.reads.some((name) => refused.has(name))) continue;
      for (const { variables, message } of rule.broken(payload.value, mode))
        payload.issues.push({
          code: 'custom',
          message,
          input: payload.value,
          path: [variables[0] ?? ''],
          params: { variables },
        });
    }
  };
}
