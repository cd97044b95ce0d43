import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { parse } from 'yaml';

// What the deployment files set, read from the files themselves, so a test of "the compose
// setup" or "the image" composes the environment the way the container runtime would.

const root = new URL('../..', import.meta.url).pathname;
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8');

/** The variables the image's final stage sets (the Dockerfile's ENV after its last FROM). */
export function imageEnv(): Record<string, string> {
  const instructions = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'));
  const lastFrom = instructions.findLastIndex((line) => /^FROM\s/.test(line));
  const env: Record<string, string> = {};
  for (const line of instructions.slice(lastFrom)) {
    const m = /^ENV\s+(.*)$/.exec(line);
    if (!m?.[1]) continue;
    for (const pair of m[1].trim().split(/\s+/)) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}

export interface ComposeService {
  env_file?: string | string[];
  environment?: Record<string, string>;
  ports?: string[];
  stop_grace_period?: string;
}

/** compose.yaml's services, as written (the `<<: *app` merges resolved). */
export function composeServices(): Record<string, ComposeService> {
  return (
    parse(read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> }
  ).services;
}

/**
 * A copy of .env.example with the lines left to fill in (uncommented, empty) filled from `values`,
 * as someone connecting Slack would; everything else as shipped.
 */
export function filledEnvExample(values: Record<string, string>): string {
  return read('.env.example').replace(/^([A-Z_]+)=$/gm, (line, name: string) =>
    values[name] !== undefined ? `${name}=${values[name]}` : line,
  );
}

/** The variables a .env file sets (a commented line sets nothing; an empty value sets ""). */
export const envFileVariables = (text: string): Record<string, string> =>
  parseEnv(text) as Record<string, string>;

/**
 * The environment a container of the compose service gets: the image's, under env_file's, under
 * the service's `environment:` (compose's order of precedence).
 */
export function composeEnv(service: string, envFile: string): Record<string, string> {
  const s = composeServices()[service];
  if (!s) throw new Error(`compose.yaml has no service ${service}`);
  const files = [s.env_file ?? []].flat();
  if (!files.includes('.env')) throw new Error(`${service} does not read .env`);
  return { ...imageEnv(), ...envFileVariables(envFile), ...(s.environment ?? {}) };
}
