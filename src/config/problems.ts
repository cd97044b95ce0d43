import type { z } from 'zod';
import { AppError } from '../errors.ts';
import { MASK, redactUrl } from '../redact.ts';

export class ConfigError extends AppError {
  readonly problems: string[];

  constructor(problems: string[]) {
    super('config_invalid', `The configuration is not usable:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

/** Variables whose values are never shown, not even in an error about them. */
const SECRETS = new Set([
  'SLACK_BOT_TOKEN',
  'SLACK_SIGNING_SECRET',
  'SLACK_APP_TOKEN',
  'APPROVAL_APP_KEY',
  'DATABASE_URL',
]);

/**
 * What was given, as a problem may show it: a secret never (only a Slack token's type prefix,
 * which tells a user token from a bot token), a URL without its password, anything long cut.
 * SANDBOX_DATA_DIR not at all: its message says why (it could be a URL holding a password).
 */
function given(name: string, value: string): string {
  if (name === 'SANDBOX_DATA_DIR') return '';
  if (SECRETS.has(name)) {
    const prefix = /^(xoxe\.xox[a-z]|xox[a-z]|xapp)-/.exec(value)?.[0];
    return prefix
      ? `; was a value starting "${prefix}" (the rest is not shown: it is a secret)`
      : '; the value given is not shown: it is a secret';
  }
  const shown = withoutPassword(value);
  return `; was "${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown}"`;
}

/**
 * A value refused as a URL, with any password it may carry hidden: a URL's (redactUrl), and in one
 * that is not quite a URL (no scheme: `user:password@proxy:3128`; a `/` in the password), whatever
 * stands between the user and the last `@`.
 */
function withoutPassword(value: string): string {
  const text = redactUrl(value);
  const start = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0].length ?? 0;
  const colon = text.indexOf(':', start);
  const at = text.lastIndexOf('@');
  return colon >= 0 && colon < at ? `${text.slice(0, colon)}:${MASK}${text.slice(at)}` : text;
}

/**
 * One issue as a line naming its variables: a rule's (rules.ts) says what was given itself; a
 * value's gets what was given, as it may be shown.
 */
export function problemOf(issue: z.core.$ZodIssue, set: Record<string, string>): string {
  const variables = (issue as { params?: { variables?: string[] } }).params?.variables;
  if (variables) return `${variables.join(' and ')}: ${issue.message}`;
  const name = String(issue.path[0]);
  const value = set[name];
  return `${name}: ${issue.message}${value === undefined ? '' : given(name, value)}`;
}
