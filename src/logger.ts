import { type Logger as BoltLogger, LogLevel } from '@slack/bolt';
import pino from 'pino';
import { describe } from './errors.ts';
import { currentLogFields } from './log-context.ts';
import { MASK } from './redact.ts';

export type Logger = pino.Logger;

/**
 * Structured JSON logs (one object per line). Known secret-bearing keys are redacted wherever
 * they appear, as a second line of defence: the code itself never logs a token or a key. Each
 * line carries the `requestId` and `djbh` of the work it belongs to, where there is one.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { app: 'slack-approvals' },
      // The request id and approval number of the work this line was written in (log-context.ts).
      mixin: () => ({ ...currentLogFields() }),
      redact: {
        paths: [
          'token',
          '*.token',
          'appKey',
          '*.appKey',
          'appkey',
          '*.appkey',
          'botToken',
          '*.botToken',
          'signingSecret',
          '*.signingSecret',
          'headers.authorization',
          '*.headers.authorization',
        ],
        censor: MASK,
      },
    },
    destination,
  );
}

const PINO_TO_BOLT: Record<string, LogLevel> = {
  fatal: LogLevel.ERROR,
  error: LogLevel.ERROR,
  warn: LogLevel.WARN,
  info: LogLevel.INFO,
};

/**
 * The debug lines of Slack's libraries known to carry no body: a Web API call's start and end,
 * its URL (a method's name; every call is a POST), that an answer came. The others write request
 * and response bodies (titles, notes, names, everyone's e-mail in users.list), envelopes and
 * acks, and whatever a later version adds: kept out unless LOG_SLACK_BODIES asks for them.
 */
const BODILESS_SLACK_DEBUG = [
  /^apiCall\('[\w.]+'\) (start|end)$/,
  /^http request url: \S+$/,
  /^http response received$/,
  /^initialized$/,
];

/**
 * Bolt's Logger interface over pino, so Bolt's own messages (and the Web API client's and Socket
 * Mode's, which get it too) are structured. Their debug lines that may hold a body are dropped
 * unless `slackBodies` (LOG_SLACK_BODIES): debug logging must not write personal data.
 */
export function boltLogger(logger: Logger, options: { slackBodies?: boolean } = {}): BoltLogger {
  const child = logger.child({ component: 'bolt' });
  const write =
    (level: pino.Level) =>
    (...msg: unknown[]) => {
      const [first, ...rest] = msg;
      if (first instanceof Error)
        child[level]({ err: first }, rest.map(String).join(' ') || first.message);
      else {
        const text = msg.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ');
        if (level === 'debug' && !options.slackBodies && !mayLogSlackDebug(text)) return;
        child[level](text);
      }
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    // LOG_LEVEL decides; Bolt sets its own default level on the logger it is given, which we ignore.
    setLevel: () => undefined,
    getLevel: () => PINO_TO_BOLT[child.level] ?? LogLevel.DEBUG,
    setName: () => undefined,
  };
}

function mayLogSlackDebug(text: string): boolean {
  return BODILESS_SLACK_DEBUG.some((pattern) => pattern.test(text));
}

/**
 * Logs a failure the way an operator wants to read it: a routine one (Slack or the approval
 * service said no, a value was refused: anything carrying a code) as one line at warn with its
 * message and code; anything else, likely a bug, at error with its stack.
 */
export function logFailure(logger: Logger, error: unknown, fields: object, msg: string): void {
  const routine = describe(error).code !== undefined;
  if (routine) logger.warn({ ...fields, error: describe(error) }, msg);
  else logger.error({ ...fields, err: error }, msg);
}
