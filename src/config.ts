import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import type { z } from 'zod';
import { withModeDefaults } from './config/defaults.ts';
import { type Mode, modeOf } from './config/mode.ts';
import { ConfigError, problemOf } from './config/problems.ts';
import { rulesOf } from './config/rules.ts';
import { configOf } from './config/shape.ts';
import { PROXY_SETTINGS, PROXY_URL_VARIABLES, SETTINGS, variables } from './config/variables.ts';
import { maskSecret, redactUrl } from './redact.ts';

export type { Mode } from './config/mode.ts';
export { ConfigError } from './config/problems.ts';
export { SANDBOX_DATABASE_FILE, workingHoursOf } from './config/shape.ts';

/**
 * The configuration of one mode as a schema: each variable read (config/variables.ts), the rules
 * between them as its refinements (config/rules.ts), then the mode's defaults
 * (config/defaults.ts) and the grouped shape the app uses (config/shape.ts).
 */
const schemaOf = (mode: Mode) =>
  variables
    .check(rulesOf(mode))
    .transform((given) => configOf(mode, withModeDefaults(mode, given)));

const SCHEMAS = {
  sandbox: schemaOf('sandbox'),
  socket: schemaOf('socket'),
  http: schemaOf('http'),
} satisfies Record<Mode, ReturnType<typeof schemaOf>>;

/** The settings as the app uses them: the schema's output, its only definition (see config/shape.ts). */
export type Config = z.output<ReturnType<typeof schemaOf>>;

/** Every variable loadConfig reads but the proxy's; each is documented in .env.example and docs/configuration.md's settings table. */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.keys(SETTINGS);

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
  const mode = modeOf(set);
  // The sandbox talks only to its own simulator on this machine, never through a proxy: one the
  // machine's shell or a copied `.env` names is no concern of it, however written.
  const read = mode === 'sandbox' ? withoutProxy(set) : set;
  const parsed = SCHEMAS[mode].safeParse(read);
  if (!parsed.success)
    throw new ConfigError(parsed.error.issues.map((issue) => problemOf(issue, read)));
  return parsed.data;
}

const withoutProxy = (set: Record<string, string>) =>
  Object.fromEntries(Object.entries(set).filter(([name]) => !(name in PROXY_SETTINGS)));

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
