import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { SANDBOX_DEFAULTS } from '../src/config/defaults.ts';
import { acceptsOf } from '../src/config/fields.ts';
import { PROXY_SETTINGS, SETTINGS } from '../src/config/variables.ts';
import {
  ConfigError,
  ENVIRONMENT_VARIABLES,
  loadConfig,
  redactConfig,
  withEnvFile,
} from '../src/config.ts';

const slackHttp = {
  SLACK_BOT_TOKEN: 'xoxb-1-secret-bot',
  SLACK_SIGNING_SECRET: 'signing-secret-value',
  APPROVAL_BASE_URL: 'https://approvals.corp.example',
  APPROVAL_APP_NAME: 'slack',
  APPROVAL_APP_KEY: 'app-key-secret',
};

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('fails closed: with DATABASE_URL or APPROVAL_BASE_URL but no Slack setting it starts nothing', () => {
    for (const [env, named] of [
      [{ DATABASE_URL: 'postgres://db/approvals' }, 'DATABASE_URL'],
      [{ APPROVAL_BASE_URL: 'https://approvals.corp.example' }, 'APPROVAL_BASE_URL'],
    ] as const) {
      const [problem] = problemsOf(env);
      expect(problem).toContain('SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET: required');
      // Not `npm start -- --sandbox`, which the sandbox refuses while the setting is there.
      expect(problem).toContain(`unset ${named} and run \`npm start\``);
    }
  });

  it('refuses the sandbox when asked for with DATABASE_URL or APPROVAL_BASE_URL, naming them', () => {
    for (const [env, named] of [
      [{ DATABASE_URL: '/tmp/x.db' }, 'DATABASE_URL'],
      [{ APPROVAL_BASE_URL: 'https://approvals.corp.example' }, 'APPROVAL_BASE_URL'],
      [
        { DATABASE_URL: 'postgres://db/approvals', APPROVAL_BASE_URL: 'https://a.example' },
        'DATABASE_URL and APPROVAL_BASE_URL',
      ],
    ] as const) {
      const problems = problemsOf({ APP_MODE: 'sandbox', ...env });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(new RegExp(`^${named}: the sandbox refuses to start`));
    }
  });

  it('runs the sandbox when asked for, on its own file in SANDBOX_DATA_DIR', () => {
    const config = loadConfig({ APP_MODE: 'sandbox', SANDBOX_DATA_DIR: '/tmp/sbx/' });
    expect(config).toMatchObject({ mode: 'sandbox', databaseUrl: '/tmp/sbx/sandbox.db' });
    // Outside the sandbox the setting means nothing.
    expect(loadConfig({ ...slackHttp, SANDBOX_DATA_DIR: '/tmp/sbx' }).databaseUrl).toBe(
      './data/approvals.db',
    );
  });

  it.each([
    'postgres://app:pg-secret@db.internal/approvals#',
    'postgresql://app:pg-secret@db.internal/approvals?x=',
    'file:///tmp/sbx',
    '/tmp/sbx?mode=rw',
    '/tmp/sbx#frag',
  ])('refuses a SANDBOX_DATA_DIR that is not a folder (%s), naming it without its value', (dir) => {
    const problems = problemsOf({ APP_MODE: 'sandbox', SANDBOX_DATA_DIR: dir });
    expect(problems).toEqual([
      'SANDBOX_DATA_DIR: must be a folder, not a URL (no scheme://, ? or #)',
    ]);
    expect(problems.join()).not.toContain('pg-secret');
  });

  it('runs the sandbox on embedded defaults when no Slack setting is present', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      mode: 'sandbox',
      port: 3000,
      logLevel: 'warn',
      databaseUrl: './data/sandbox.db',
      approval: { appName: 'slack-approvals', timeoutMs: 10_000 },
      poll: {
        cron: '*/2 * * * * *',
        concurrency: 4,
        maxIntervalMs: 3_600_000,
        giveUpAfterMs: 30 * 86_400_000,
        passBudgetMs: 20_000,
      },
      slack: { timeoutMs: 10_000 },
      delivery: {
        leaseMs: 120_000,
        retryForMs: 24 * 3_600_000,
        channelIntervalMs: 1000,
        concurrency: 4,
      },
      retentionDays: 1,
    });
    expect(config.approval.baseUrl).toBeUndefined();
  });

  it('runs the sandbox whatever proxy the machine names, since it never uses one', () => {
    // As a corporate laptop's shell often has them: a range, a proxy without its scheme.
    const machine = {
      no_proxy: 'localhost,127.0.0.0/8,::1',
      NO_PROXY: 'localhost 127.0.0.1',
      http_proxy: 'proxy.corp.example:3128',
      HTTPS_PROXY: 'proxy.corp.example:3128',
    };
    const config = loadConfig(machine);
    expect(config.mode).toBe('sandbox');
    expect(config.approval.proxyEnv).toEqual({});
    expect(loadConfig({ ...machine, APP_MODE: 'sandbox' }).mode).toBe('sandbox');
  });

  it('sizes the Postgres pool for the configured work, or as DATABASE_POOL_SIZE says, with a statement timeout', () => {
    expect(loadConfig(slackHttp).databasePool).toEqual({ size: 14, statementTimeoutMs: 15_000 });
    expect(
      loadConfig({ ...slackHttp, POLL_CONCURRENCY: '32', DELIVERY_CONCURRENCY: '16' }).databasePool
        .size,
    ).toBe(54);
    expect(
      loadConfig({ ...slackHttp, DATABASE_POOL_SIZE: '7', DATABASE_STATEMENT_TIMEOUT_MS: '2000' })
        .databasePool,
    ).toEqual({ size: 7, statementTimeoutMs: 2000 });
  });

  it('gives a stop time to finish a submission under way: the grace must outlast a call to the service', () => {
    expect(loadConfig(slackHttp).shutdown).toEqual({ graceMs: 25_000, drainMs: 2000 });
    expect(loadConfig({}).shutdown).toEqual({ graceMs: 25_000, drainMs: 0 });
    expect(
      problemsOf({ ...slackHttp, SHUTDOWN_GRACE_MS: '5000', APPROVAL_TIMEOUT_MS: '10000' }).join(),
    ).toContain(
      'SHUTDOWN_GRACE_MS: must be at least APPROVAL_TIMEOUT_MS + SHUTDOWN_DRAIN_MS + 2000 (14000 ms)',
    );
  });

  it('listens where HOST says, on every interface without it', () => {
    expect(loadConfig(slackHttp).host).toBeUndefined();
    expect(loadConfig({ ...slackHttp, HOST: '127.0.0.1' }).host).toBe('127.0.0.1');
  });

  it('keeps ended approvals 400 days by default, as long as RETENTION_DAYS says, or for good with 0', () => {
    expect(loadConfig(slackHttp).retentionDays).toBe(400);
    expect(loadConfig({ ...slackHttp, RETENTION_DAYS: '30' }).retentionDays).toBe(30);
    expect(loadConfig({ ...slackHttp, RETENTION_DAYS: '0' }).retentionDays).toBe(0);
    expect(problemsOf({ ...slackHttp, RETENTION_DAYS: '-1' }).join()).toContain('RETENTION_DAYS');
  });

  it('escalates after ESCALATE_AFTER_REMINDERS unanswered reminders: off by default, 2 in the sandbox (with reminders a minute apart)', () => {
    const deployed = loadConfig(slackHttp);
    expect(deployed.escalateAfterReminders).toBe(0);
    expect(deployed.reminders).toEqual({
      afterMs: 24 * 3_600_000,
      intervalMs: 24 * 3_600_000,
      max: 3,
    });
    expect(loadConfig({ ...slackHttp, ESCALATE_AFTER_REMINDERS: '2' }).escalateAfterReminders).toBe(
      2,
    );
    const sandbox = loadConfig({});
    expect(sandbox.escalateAfterReminders).toBe(2);
    expect(sandbox.reminders).toEqual({ afterMs: 60_000, intervalMs: 60_000, max: 3 });
    // What is set wins in the sandbox too.
    const set = loadConfig({
      REMINDER_AFTER_HOURS: '2',
      ESCALATE_AFTER_REMINDERS: '0',
      REMINDER_MAX: '1',
    });
    expect(set.reminders.afterMs).toBe(2 * 3_600_000);
    expect(set.escalateAfterReminders).toBe(0);
    expect(loadConfig({ REMINDER_MAX: '1' }).escalateAfterReminders).toBe(1);
  });

  it('keeps reminders to working hours, Monday to Friday 09:00-18:00 by default, or off', () => {
    expect(loadConfig(slackHttp).workingHours).toEqual({
      startMinute: 540,
      endMinute: 1080,
      days: [1, 2, 3, 4, 5],
      defaultTimeZone: 'UTC',
    });
    expect(
      loadConfig({
        ...slackHttp,
        WORKING_HOURS: '08:30-17:00',
        WORKING_DAYS: 'sun-thu',
        WORKING_TIME_ZONE: 'Asia/Jerusalem',
      }).workingHours,
    ).toEqual({
      startMinute: 510,
      endMinute: 1020,
      days: [0, 1, 2, 3, 4],
      defaultTimeZone: 'Asia/Jerusalem',
    });
    expect(loadConfig({ ...slackHttp, WORKING_HOURS: 'off' }).workingHours).toBeUndefined();
    const problems = problemsOf({
      ...slackHttp,
      WORKING_HOURS: '18:00-09:00',
      WORKING_DAYS: 'weekdays',
      WORKING_TIME_ZONE: 'Mars/Olympus',
    });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^WORKING_HOURS: must be HH:MM-HH:MM/);
    expect(problems[1]).toMatch(/^WORKING_DAYS: must name days/);
    expect(problems[2]).toMatch(/^WORKING_TIME_ZONE: must be an IANA time zone/);
  });

  it('refuses working days written any way the documentation does not give, naming the accepted forms', () => {
    // Each was once accepted and read as something else: "mon tue wed thu fri" and "mon–fri" (an
    // en dash) as Monday only, "mon-fri-sun" as Monday to Friday.
    for (const days of [
      'mon tue wed thu fri',
      'mon–fri',
      'mon-fri-sun',
      'tues',
      'mon,,fri',
      'mon-',
    ]) {
      const problems = problemsOf({ ...slackHttp, WORKING_DAYS: days });
      expect(problems, days).toHaveLength(1);
      expect(problems[0]).toMatch(/^WORKING_DAYS: must name days \(mon or monday, any case\)/);
      expect(problems[0]).toContain('joined by a hyphen, separated by commas');
    }
    const daysOf = (days: string) =>
      loadConfig({ ...slackHttp, WORKING_DAYS: days }).workingHours?.days;
    expect(daysOf('Monday-Friday')).toEqual([1, 2, 3, 4, 5]);
    expect(daysOf('fri-mon')).toEqual([0, 1, 5, 6]);
    expect(daysOf('mon, wed ,FRI')).toEqual([1, 3, 5]);
    expect(daysOf('sun')).toEqual([0]);
  });

  it('reads whole numbers written as digits only, as documented, and refuses other ways of writing numbers', () => {
    // Each was once read as a number: 1000, 16, 1, 4.
    for (const value of ['1e3', '0x10', '0b1', '4.0', '+4', '-0'])
      expect(problemsOf({ ...slackHttp, POLL_CONCURRENCY: value }), value).toEqual([
        `POLL_CONCURRENCY: must be a whole number from 1 to 64; was "${value}"`,
      ]);
    expect(loadConfig({ ...slackHttp, POLL_CONCURRENCY: ' 8 ' }).poll.concurrency).toBe(8);
    expect(loadConfig({ ...slackHttp, PORT: '0' }).port).toBe(0);
  });

  it('refuses an escalation that needs more reminders than are sent, or is not a whole number', () => {
    expect(problemsOf({ ...slackHttp, ESCALATE_AFTER_REMINDERS: '4' })).toEqual([
      'ESCALATE_AFTER_REMINDERS: must be at most REMINDER_MAX (3), since it counts reminders that went unanswered (0 turns escalation off); was 4',
    ]);
    expect(
      problemsOf({ ...slackHttp, REMINDER_MAX: '0', ESCALATE_AFTER_REMINDERS: '1' })[0],
    ).toContain('ESCALATE_AFTER_REMINDERS: must be at most REMINDER_MAX (0)');
    expect(problemsOf({ ...slackHttp, ESCALATE_AFTER_REMINDERS: 'two' })[0]).toMatch(
      /^ESCALATE_AFTER_REMINDERS: .*was "two"$/,
    );
  });

  it('refuses a delivery lease too short for the Slack timeout, since a late call could outlive it', () => {
    expect(
      problemsOf({ ...slackHttp, ANNOUNCEMENT_LEASE_SECONDS: '20', SLACK_TIMEOUT_MS: '10000' }),
    ).toEqual(['ANNOUNCEMENT_LEASE_SECONDS: must be at least 3 × SLACK_TIMEOUT_MS (30 s); was 20']);
    expect(
      loadConfig({ ...slackHttp, ANNOUNCEMENT_LEASE_SECONDS: '3', SLACK_TIMEOUT_MS: '1000' })
        .delivery.leaseMs,
    ).toBe(3000);
  });

  it('chooses HTTP mode with a signing secret and Socket Mode with an app token', () => {
    expect(loadConfig(slackHttp).mode).toBe('http');
    expect(loadConfig(slackHttp).poll.cron).toBe('*/30 * * * * *');
    expect(loadConfig(slackHttp).databaseUrl).toBe('./data/approvals.db');
    expect(loadConfig(slackHttp).logLevel).toBe('info');
    expect(
      loadConfig({ ...slackHttp, SLACK_SIGNING_SECRET: undefined, SLACK_APP_TOKEN: 'xapp-1-x' })
        .mode,
    ).toBe('socket');
  });

  it('has no admin listener by default, and puts one on loopback when ADMIN_PORT is set', () => {
    expect(loadConfig(slackHttp).admin).toBeUndefined();
    expect(loadConfig({}).admin).toBeUndefined();
    expect(loadConfig({ ...slackHttp, ADMIN_PORT: '9091' }).admin).toEqual({
      port: 9091,
      host: '127.0.0.1',
    });
    expect(loadConfig({ ...slackHttp, ADMIN_PORT: '9091', ADMIN_HOST: '0.0.0.0' }).admin).toEqual({
      port: 9091,
      host: '0.0.0.0',
    });
  });

  it('ignores ADMIN_HOST without ADMIN_PORT, as the image sets both and a deployment may unset one', () => {
    expect(loadConfig({ ...slackHttp, ADMIN_HOST: '0.0.0.0' }).admin).toBeUndefined();
    expect(
      loadConfig({ ...slackHttp, ADMIN_PORT: '', ADMIN_HOST: '0.0.0.0' }).admin,
    ).toBeUndefined();
  });

  it('refuses an admin port that is Slack’s port', () => {
    expect(problemsOf({ ...slackHttp, PORT: '3000', ADMIN_PORT: '3000' })).toEqual([
      'ADMIN_PORT: must differ from PORT (3000), which Slack reaches; the admin endpoints move off it',
    ]);
    expect(problemsOf({ ...slackHttp, ADMIN_PORT: '70000' }).join('\n')).toMatch(/^ADMIN_PORT:/);
    // Both 0: each gets a free port of its own.
    expect(loadConfig({ ...slackHttp, PORT: '0', ADMIN_PORT: '0' }).admin?.port).toBe(0);
  });

  it('lists every missing or invalid value in one error', () => {
    const problems = problemsOf({
      SLACK_SIGNING_SECRET: 'x',
      PORT: 'eighty',
      STATUS_POLL_CRON: 'every minute',
      APPROVAL_WEB_URL: 'not a url',
    });
    expect(problems).toHaveLength(7);
    expect(problems.join('\n')).toMatch(/PORT:/);
    expect(problems.join('\n')).toMatch(/STATUS_POLL_CRON: must be a node-cron expression/);
    expect(problems.join('\n')).toMatch(/APPROVAL_WEB_URL: must be an http\(s\) URL/);
    expect(problems).toContain('SLACK_BOT_TOKEN: required to talk to Slack (xoxb-…)');
    expect(problems).toContain('APPROVAL_BASE_URL: required when connecting to Slack');
    expect(problems).toContain('APPROVAL_APP_NAME: required when connecting to Slack');
    expect(problems).toContain('APPROVAL_APP_KEY: required when connecting to Slack');
  });

  it('keeps the approver list on the service: APPROVAL_WEB_LIST_PATH is a route or path, never another site', () => {
    expect(loadConfig({ ...slackHttp }).approval.webListPath).toBe('#/approval/4000000000');
    for (const elsewhere of [
      'https://evil.example/#/approval/0',
      '//evil.example/x',
      'javascript:alert(1)',
    ])
      expect(problemsOf({ ...slackHttp, APPROVAL_WEB_LIST_PATH: elsewhere }).join('\n')).toMatch(
        /APPROVAL_WEB_LIST_PATH: must be a route or path on APPROVAL_WEB_URL/,
      );
    expect(
      loadConfig({ ...slackHttp, APPROVAL_WEB_LIST_PATH: '/c3/#/approval/0' }).approval.webListPath,
    ).toBe('/c3/#/approval/0');
  });

  it('names the missing signing secret in HTTP mode', () => {
    expect(problemsOf({ ...slackHttp, SLACK_SIGNING_SECRET: undefined })).toEqual([
      'SLACK_SIGNING_SECRET: required in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)',
    ]);
  });

  it('counts an empty variable as unset', () => {
    expect(loadConfig({ SLACK_BOT_TOKEN: '', PORT: '', DATABASE_URL: ' ' })).toMatchObject({
      mode: 'sandbox',
      port: 3000,
    });
  });

  it('accepts a seconds field in the poll schedule', () => {
    expect(loadConfig({ STATUS_POLL_CRON: '*/5 * * * * *' }).poll.cron).toBe('*/5 * * * * *');
  });

  describe('says of each problem the variable, what it must be, and what was given', () => {
    it.each([
      [
        'integer',
        { POLL_CONCURRENCY: 'four' },
        'POLL_CONCURRENCY: must be a whole number from 1 to 64; was "four"',
      ],
      [
        'integer out of range',
        { POLL_CONCURRENCY: '100' },
        'POLL_CONCURRENCY: must be a whole number from 1 to 64; was "100"',
      ],
      [
        'integer with a fraction',
        { PORT: '80.5' },
        'PORT: must be a whole number from 0 to 65535; was "80.5"',
      ],
      [
        'enum',
        { LOG_LEVEL: 'verbose' },
        'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace; was "verbose"',
      ],
      ['enum of two', { APP_LANGUAGE: 'fr' }, 'APP_LANGUAGE: must be en or zh; was "fr"'],
      [
        'URL',
        { APPROVAL_WEB_URL: 'approvals.example.com' },
        'APPROVAL_WEB_URL: must be an http(s) URL, e.g. https://approvals.example.com; was "approvals.example.com"',
      ],
      [
        'cron',
        { STATUS_POLL_CRON: 'every minute' },
        'STATUS_POLL_CRON: must be a node-cron expression, e.g. "*/30 * * * * *"; was "every minute"',
      ],
      [
        'token prefix',
        { SLACK_BOT_TOKEN: 'xoxp-1-user-secret' },
        'SLACK_BOT_TOKEN: must be a bot token (xoxb-…); was a value starting "xoxp-" (the rest is not shown: it is a secret)',
      ],
      [
        'token without a prefix',
        { SLACK_APP_TOKEN: 'raw-secret-value' },
        'SLACK_APP_TOKEN: must be an app-level token (xapp-…); the value given is not shown: it is a secret',
      ],
    ] as const)('%s', (_kind, env, problem) => {
      const problems = problemsOf({ ...slackHttp, ...env });
      expect(problems).toEqual([problem]);
      expect(problems.join()).not.toMatch(/Invalid input|received/);
    });

    it('shows a URL without its password', () => {
      const problems = problemsOf({
        ...slackHttp,
        APPROVAL_BASE_URL: 'ftp://svc:url-password@approvals.example',
      });
      expect(problems).toEqual([
        'APPROVAL_BASE_URL: must be an http(s) URL, e.g. https://approvals.example.com; was "ftp://svc:***@approvals.example"',
      ]);
    });
  });

  it('shows no password a malformed URL carries: a proxy without its scheme, a / in the password, a password in the query', () => {
    for (const [name, value, shown] of [
      [
        'HTTPS_PROXY',
        'alice:proxy-secret@proxy.corp.example:3128',
        'alice:***@proxy.corp.example:3128',
      ],
      [
        'HTTPS_PROXY',
        'http://alice:pa/proxy-secret@proxy.corp.example:3128',
        'http://alice:***@proxy.corp.example:3128',
      ],
      ['HTTP_PROXY', 'socks5://alice:pa/proxy-secret@proxy:1080', 'socks5://alice:***@proxy:1080'],
      [
        'APPROVAL_BASE_URL',
        'https://svc:pa/url-secret@approvals example',
        'https://svc:***@approvals example',
      ],
      [
        'APPROVAL_WEB_URL',
        'https://approvals example/?password=url-secret',
        'https://approvals example/?password=***',
      ],
    ] as const) {
      const problems = problemsOf({ ...slackHttp, [name]: value });
      expect(problems, value).toEqual([expect.stringMatching(new RegExp(`^${name}: `))]);
      expect(problems[0], value).toContain(`was "${shown}"`);
      expect(problems.join('\n'), value).not.toMatch(/-secret/);
    }
  });

  it('never puts a secret into its error message', () => {
    const error = (() => {
      try {
        loadConfig({
          SLACK_BOT_TOKEN: 'xoxp-user-token-secret',
          SLACK_APP_TOKEN: 'bad-app-token-secret',
        });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected an error');
    })();
    expect(error.message).not.toContain('user-token-secret');
    expect(error.message).not.toContain('bad-app-token-secret');
    expect(error.message).toContain('SLACK_BOT_TOKEN: must be a bot token');
  });

  it('takes a rotating bot token (xoxe.xoxb-…, as Slack issues it with token rotation on), and refuses a rotating user or refresh token', () => {
    const rotating = loadConfig({ ...slackHttp, SLACK_BOT_TOKEN: 'xoxe.xoxb-1-rotating-secret' });
    expect(rotating.slack.botToken).toBe('xoxe.xoxb-1-rotating-secret');
    expect(problemsOf({ ...slackHttp, SLACK_BOT_TOKEN: 'xoxe.xoxp-1-user-secret' })).toEqual([
      'SLACK_BOT_TOKEN: must be a bot token (xoxb-…); was a value starting "xoxe.xoxp-" (the rest is not shown: it is a secret)',
    ]);
    expect(problemsOf({ ...slackHttp, SLACK_BOT_TOKEN: 'xoxe-1-refresh-secret' })).toEqual([
      'SLACK_BOT_TOKEN: must be a bot token (xoxb-…); was a value starting "xoxe-" (the rest is not shown: it is a secret)',
    ]);
  });

  it('masks secrets when the configuration is printed', () => {
    const printed = JSON.stringify(
      redactConfig(
        loadConfig({ ...slackHttp, DATABASE_URL: 'postgres://app:pg-password@db/approvals' }),
      ),
    );
    for (const secret of [
      'xoxb-1-secret-bot',
      'signing-secret-value',
      'app-key-secret',
      'pg-password',
    ]) {
      expect(printed).not.toContain(secret);
    }
    expect(printed).toContain('postgres://app:***@db/approvals');
  });
  it('checks a rule between variables once the values it compares are read, and reports it with every other problem', () => {
    // The lease's own problem only: the rule comparing it with SLACK_TIMEOUT_MS has no lease to compare.
    expect(problemsOf({ ...slackHttp, ANNOUNCEMENT_LEASE_SECONDS: 'x' })).toEqual([
      'ANNOUNCEMENT_LEASE_SECONDS: must be a whole number from 1 to 3600; was "x"',
    ]);
    expect(problemsOf({ ...slackHttp, PORT: 'eighty', ESCALATE_AFTER_REMINDERS: '4' })).toEqual([
      'PORT: must be a whole number from 0 to 65535; was "eighty"',
      'ESCALATE_AFTER_REMINDERS: must be at most REMINDER_MAX (3), since it counts reminders that went unanswered (0 turns escalation off); was 4',
    ]);
  });

  it('holds the stop time to the drain the mode uses: none in the sandbox', () => {
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '12000' }).shutdown).toEqual({
      graceMs: 12_000,
      drainMs: 0,
    });
    expect(problemsOf({ ...slackHttp, SHUTDOWN_GRACE_MS: '12000' })).toEqual([
      'SHUTDOWN_GRACE_MS: must be at least APPROVAL_TIMEOUT_MS + SHUTDOWN_DRAIN_MS + 2000 (14000 ms), so a submission under way at a stop can finish; was 12000',
    ]);
  });

  it('turns the hot pass off with HOT_POLL_CRON=off, and refuses any other word', () => {
    expect(loadConfig(slackHttp).poll.hotCron).toBe('*/5 * * * * *');
    expect(loadConfig({ ...slackHttp, HOT_POLL_CRON: 'off' }).poll.hotCron).toBeUndefined();
    expect(problemsOf({ ...slackHttp, HOT_POLL_CRON: 'never' })).toEqual([
      'HOT_POLL_CRON: must be a node-cron expression or off; was "never"',
    ]);
  });

  it('takes an http(s) URL with a host and nothing around it, and refuses anything else', () => {
    for (const url of [
      'http:approvals.example.com',
      'https://',
      'https://approvals.example.com/ api',
      'approvals.example.com',
      'ftp://approvals.example.com',
    ])
      expect(problemsOf({ ...slackHttp, APPROVAL_BASE_URL: url }), url).toEqual([
        `APPROVAL_BASE_URL: must be an http(s) URL, e.g. https://approvals.example.com; was "${url}"`,
      ]);
    expect(
      loadConfig({ ...slackHttp, SLACK_API_URL: 'http://127.0.0.1:8080/api/' }).slack.apiUrl,
    ).toBe('http://127.0.0.1:8080/api/');
  });

  it('opens a SQLite path or a Postgres URL, and refuses another scheme or a connection string without showing it', () => {
    for (const url of ['./data/x.db', '/var/lib/app/approvals.db', ':memory:'])
      expect(loadConfig({ ...slackHttp, DATABASE_URL: url }).databaseUrl).toBe(url);
    for (const url of ['postgres://app:pw@db/approvals', 'POSTGRESQL://db/approvals'])
      expect(loadConfig({ ...slackHttp, DATABASE_URL: url }).databaseUrl).toBe(url);
    for (const url of [
      'postgress://app:pg-secret@db/approvals',
      'mysql://app:pg-secret@db/approvals',
      'host=db user=app password=pg-secret',
    ]) {
      const problems = problemsOf({ ...slackHttp, DATABASE_URL: url });
      expect(problems, url).toEqual([
        'DATABASE_URL: must be a SQLite file path or a postgres:// (or postgresql://) URL; the value given is not shown: it is a secret',
      ]);
    }
  });

  it('refuses a Postgres URL it would take for a file path, password and all: a space before it, or a mistyped ://', () => {
    for (const url of [
      ' postgres://app:pg-secret@db/approvals',
      '\tpostgresql://app:pg-secret@db/approvals',
      'postgres:/app:pg-secret@db/approvals',
      'postgres//app:pg-secret@db/approvals',
      'postgres:app:pg-secret@db/approvals',
    ])
      expect(problemsOf({ ...slackHttp, DATABASE_URL: url }), url).toEqual([
        'DATABASE_URL: must be a SQLite file path or a postgres:// (or postgresql://) URL; the value given is not shown: it is a secret',
      ]);
    expect(loadConfig({ ...slackHttp, DATABASE_URL: './data/app@2.db' }).databaseUrl).toBe(
      './data/app@2.db',
    );
  });

  it('takes the fallback time zone by its IANA name only, never a fixed offset', () => {
    for (const zone of ['Europe/Berlin', 'UTC', 'Etc/GMT+5', 'US/Eastern'])
      expect(
        loadConfig({ ...slackHttp, WORKING_TIME_ZONE: zone }).workingHours?.defaultTimeZone,
      ).toBe(zone);
    // Each is a zone to Intl, as a fixed offset: Berlin's hours would be an hour off all summer.
    for (const zone of ['+01:00', '-0500'])
      expect(problemsOf({ ...slackHttp, WORKING_TIME_ZONE: zone })[0], zone).toMatch(
        /^WORKING_TIME_ZONE: must be an IANA time zone, .*not an offset/,
      );
  });

  it('leads the approver’s button to a route (#…) or a path (/…) on the service only, as documented', () => {
    for (const path of ['approval/list', '?page=approvals', '#/approval/ 0'])
      expect(problemsOf({ ...slackHttp, APPROVAL_WEB_LIST_PATH: path }), path).toEqual([
        `APPROVAL_WEB_LIST_PATH: must be a route or path on APPROVAL_WEB_URL, starting with # or / (e.g. #/approval/4000000000 or /ui/#/approval/0), not a URL; was "${path}"`,
      ]);
  });

  it('listens on an address or a host name only, refusing what would fail only when the port opens', () => {
    for (const host of ['127.0.0.1', '0.0.0.0', '::', 'localhost', 'app.internal'])
      expect(loadConfig({ ...slackHttp, HOST: host }).host).toBe(host);
    for (const host of ['http://0.0.0.0', '0.0.0.0:9091', '*'])
      expect(problemsOf({ ...slackHttp, ADMIN_PORT: '9091', ADMIN_HOST: host }), host).toEqual([
        `ADMIN_HOST: must be an IP address or a host name, e.g. 127.0.0.1, 0.0.0.0 or :: (no scheme, port or brackets); was "${host}"`,
      ]);
  });

  it('tells an IPv6 address in brackets, which never listened, to go without them, and takes a host name with _', () => {
    // `[::1]` failed when the port opened (getaddrinfo ENOTFOUND); `::1` listens.
    expect(problemsOf({ ...slackHttp, HOST: '[::1]' })).toEqual([
      'HOST: must be an IP address or a host name, e.g. 127.0.0.1, 0.0.0.0 or :: (no scheme, port or brackets); was "[::1]"',
    ]);
    expect(loadConfig({ ...slackHttp, HOST: '::1' }).host).toBe('::1');
    // A compose service's name may hold `_`, and the resolver takes it.
    expect(loadConfig({ ...slackHttp, HOST: 'slack_approvals' }).host).toBe('slack_approvals');
  });

  it('refuses an address range in NO_PROXY only when it holds the service’s own address, which the proxy agents would not match', () => {
    const proxied = {
      ...slackHttp,
      APPROVAL_BASE_URL: 'http://10.0.0.7:8080',
      HTTP_PROXY: 'http://proxy.corp.example:3128',
    };
    for (const name of ['NO_PROXY', 'no_proxy'])
      expect(problemsOf({ ...proxied, [name]: 'localhost,10.0.0.0/8' })).toEqual([
        `${name}: the range 10.0.0.0/8 holds APPROVAL_BASE_URL's address 10.0.0.7, but the proxy agents match no ranges, so the service would be called through the proxy: add 10.0.0.7 itself`,
      ]);
    // Node's agents read the lower-case one first.
    expect(loadConfig({ ...proxied, NO_PROXY: '10.0.0.0/8', no_proxy: '10.0.0.7' }).mode).toBe(
      'http',
    );
    for (const env of [
      { NO_PROXY: '10.0.0.0/8,10.0.0.7' },
      { NO_PROXY: '10.1.0.0/16' },
      { NO_PROXY: '10.0.0.0/8', HTTP_PROXY: undefined },
      { NO_PROXY: '10.0.0.0/8', APPROVAL_BASE_URL: 'http://approvals.corp.example' },
    ])
      expect(loadConfig({ ...proxied, ...env }).mode, JSON.stringify(env)).toBe('http');
    expect(
      problemsOf({ ...proxied, NO_PROXY: 'fd00::/8', APPROVAL_BASE_URL: 'http://[fd00::7]:8080' }),
    ).toHaveLength(1);
  });

  it('refuses a NO_PROXY entry the proxy agents would ignore or read differently, naming the accepted forms', () => {
    for (const list of [
      'localhost,.corp.example',
      '*',
      '10.0.0.7:8080, *.corp.example',
      // As Kubernetes and corporate images commonly set it: both agents honour each of these
      // (test/approval-service/approval-service-client.test.ts goes through them).
      'localhost,127.0.0.1,::1,.svc,.cluster.local',
      'localhost,127.0.0.1,',
      'approval_service,.corp.example,*',
      // OpenShift's cluster-wide proxy: its networks as ranges, which match no host name.
      '.cluster.local,.svc,10.128.0.0/14,127.0.0.1,172.30.0.0/16,fd00::/8,localhost',
    ])
      expect(loadConfig({ ...slackHttp, NO_PROXY: list }).approval.proxyEnv.NO_PROXY).toBe(list);
    // A space-separated list is one host to Node's agents and several to undici, and so is a
    // bracketed IPv6 address, with or without a port.
    for (const list of [
      'localhost .corp.example',
      'http://intranet.corp.example',
      '[::1],127.0.0.1',
      '[::1]:8080',
    ])
      for (const name of ['NO_PROXY', 'no_proxy'])
        expect(problemsOf({ ...slackHttp, [name]: list }), list).toEqual([
          `${name}: must be * or hosts and domains separated by commas, each maybe with :port, e.g. localhost,::1,.corp.example,10.0.0.7:8080 (no URLs; an IPv6 address without brackets or port); was "${list}"`,
        ]);
  });
});

describe('the documented settings', () => {
  const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

  /** The settings table's rows: each variable named in the first column, with its cells. */
  function settingsRows(): Map<string, { default: string; accepts: string }> {
    const section = /\n## Every setting\n([\s\S]*)$/.exec(read('docs/configuration.md'))?.[1] ?? '';
    const rows = new Map<string, { default: string; accepts: string }>();
    for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
      const [names = '', byDefault = '', accepts = ''] = line.slice(2, -2).split(' | ');
      for (const [, name] of names.matchAll(/`([A-Za-z_]+)`/g))
        rows.set(name as string, { default: byDefault, accepts });
    }
    return rows;
  }
  const settingsTable = () =>
    new Map([...settingsRows()].map(([name, row]) => [name, row.accepts] as const));
  const readers: Record<string, z.ZodType> = { ...SETTINGS, ...PROXY_SETTINGS };

  it('documents exactly the variables the app reads, each with the forms its reader accepts', () => {
    const table = settingsTable();
    expect([...table.keys()].sort()).toEqual(Object.keys(readers).sort());
    for (const [name, reader] of Object.entries(readers))
      expect(table.get(name), name).toBe(acceptsOf(reader));
  });

  it('documents each literal default as the one a deployment has: setting it changes nothing', () => {
    const unset = loadConfig(slackHttp);
    let literals = 0;
    for (const [name, row] of settingsRows()) {
      // "24 (sandbox: 1 min)" is 24 in a deployment; "—" or words ("every interface") name no value.
      const cell = row.default.replace(/ \(.*\)$/, '');
      const value = /^\d+$/.test(cell) ? cell : /^`([^`]+)`$/.exec(cell)?.[1];
      if (value === undefined) continue;
      literals++;
      expect(loadConfig({ ...slackHttp, [name]: value }), `${name}=${value}`).toEqual(unset);
    }
    expect(literals).toBeGreaterThan(30);
  });

  it('gives a default to no variable a deployment must set: "—" or "sandbox: …" there', () => {
    let defaults = 0;
    for (const [name, row] of settingsRows()) {
      if (/^(—|sandbox:)/.test(row.default)) continue;
      defaults++;
      const { [name]: _left, ...unset } = slackHttp as Record<string, string>;
      expect(() => loadConfig(unset), `${name}: ${row.default}`).not.toThrow();
    }
    expect(defaults).toBeGreaterThan(40);
  });

  it('gives the sandbox’s own default beside a deployment’s for every variable its overlay changes', () => {
    const rows = settingsRows();
    expect(Object.keys(SANDBOX_DEFAULTS)).toContain('RETENTION_DAYS');
    for (const name of Object.keys(SANDBOX_DEFAULTS))
      expect(rows.get(name)?.default, name).toMatch(/sandbox/);
  });

  it('accepts every whole-number range as documented, both ends included, and nothing past them', () => {
    let ranges = 0;
    for (const [name, accepts] of settingsTable()) {
      const range = /^(\d+)–(\d+)$/.exec(accepts);
      if (!range) continue;
      ranges++;
      const [min, max] = [Number(range[1]), Number(range[2])];
      const reader = readers[name] as z.ZodType;
      expect(reader.safeParse(String(min)).success, `${name} ${min}`).toBe(true);
      expect(reader.safeParse(String(max)).success, `${name} ${max}`).toBe(true);
      expect(reader.safeParse(String(max + 1)).success, `${name} ${max + 1}`).toBe(false);
      if (min > 0)
        expect(reader.safeParse(String(min - 1)).success, `${name} ${min - 1}`).toBe(false);
    }
    expect(ranges).toBeGreaterThan(20);
  });

  it('takes as a whole number exactly digits within the documented range, whatever else is written', () => {
    const ranges = [...settingsTable()].flatMap(([name, accepts]) => {
      const range = /^(\d+)–(\d+)$/.exec(accepts);
      return range ? [{ name, min: Number(range[1]), max: Number(range[2]) }] : [];
    });
    const text = fc.oneof(
      fc.string(),
      fc.integer({ min: -10, max: 700_000 }).map(String),
      fc.stringMatching(/^\s?[-+0-9.ex]{1,8}\s?$/),
    );
    fc.assert(
      fc.property(fc.constantFrom(...ranges), text, ({ name, min, max }, value) => {
        const digits = /^\d+$/.test(value.trim());
        const expected = digits && Number(value) >= min && Number(value) <= max;
        expect((readers[name] as z.ZodType).safeParse(value).success).toBe(expected);
      }),
      { seed: 37, numRuns: 2000 },
    );
  });

  it('accepts every word of a documented choice, as written, and no other', () => {
    let choices = 0;
    for (const [name, accepts] of settingsTable()) {
      if (!/^`[a-z]+`(, `[a-z]+`| or `[a-z]+`)+$/.test(accepts)) continue;
      choices++;
      const words = [...accepts.matchAll(/`([a-z]+)`/g)].map((m) => m[1] as string);
      const reader = readers[name] as z.ZodType;
      for (const word of words) {
        expect(reader.safeParse(word).success, `${name} ${word}`).toBe(true);
        expect(reader.safeParse(word.toUpperCase()).success, `${name} ${word.toUpperCase()}`).toBe(
          false,
        );
        expect(reader.safeParse(`${word}s`).success, `${name} ${word}s`).toBe(false);
      }
    }
    expect(choices).toBe(6);
  });

  it('lists every variable the app reads in .env.example and in docs/configuration.md’s settings table', () => {
    const example = read('.env.example');
    const readme = read('docs/configuration.md');
    expect(ENVIRONMENT_VARIABLES).toContain('ADMIN_PORT');
    for (const name of ENVIRONMENT_VARIABLES) {
      // Uncommented only where a deployment fills it in; otherwise a comment with its default.
      expect(example, `.env.example: ${name}`).toMatch(new RegExp(`^(# )?${name}=`, 'm'));
      expect(readme, `docs/configuration.md: ${name}`).toMatch(
        new RegExp(`^\\| [^|]*\`${name}\``, 'm'),
      );
    }
  });

  it('keeps each mode’s reminder and escalation defaults when .env.example is copied as it is', () => {
    const copied = withEnvFile({}, read('.env.example'));
    // Documented there, but set by nobody who copies it.
    for (const name of ['REMINDER_AFTER_HOURS', 'REMINDER_INTERVAL_HOURS', 'REMINDER_MAX'])
      expect(read('.env.example')).toMatch(new RegExp(`^# ${name}=$`, 'm'));
    // The sandbox still reminds every minute and escalates after two, so it can be watched.
    expect(loadConfig({ APP_MODE: 'sandbox', ...copied })).toMatchObject({
      reminders: { afterMs: 60_000, intervalMs: 60_000, max: 3 },
      escalateAfterReminders: 2,
    });
    expect(loadConfig({ ...copied, ...slackHttp })).toMatchObject({
      reminders: { afterMs: 86_400_000, intervalMs: 86_400_000, max: 3 },
      escalateAfterReminders: 0,
    });
  });
});

describe('.env.example copied as it is', () => {
  it('changes no setting of either mode: each value it sets is the default', () => {
    const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
    const copied = withEnvFile({}, example);
    expect(loadConfig({ ...copied, APP_MODE: 'sandbox' })).toEqual(
      loadConfig({ APP_MODE: 'sandbox' }),
    );
    expect(loadConfig({ ...copied, ...slackHttp })).toEqual(loadConfig(slackHttp));
  });
});

describe('withEnvFile', () => {
  it('reads a .env file under the real environment, which wins', () => {
    const env = withEnvFile(
      { PORT: '4000', EMPTY: undefined },
      'PORT=3011\nLOG_LEVEL=debug\n# note\n',
    );
    expect(env).toMatchObject({ PORT: '4000', LOG_LEVEL: 'debug' });
    expect(withEnvFile({ PORT: '1' }, undefined)).toEqual({ PORT: '1' });
  });
  it('hides a proxy’s password in the configuration it logs, and refuses a proxy that is no URL without showing it', () => {
    const names = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy'];
    for (const name of names) {
      const config = loadConfig({
        ...slackHttp,
        [name]: 'http://alice:s3cret-proxy@proxy.corp.example:3128',
        NO_PROXY: 'localhost,.corp.example',
      });
      expect(config.approval.proxyEnv[name]).toBe(
        'http://alice:s3cret-proxy@proxy.corp.example:3128',
      );
      const logged = JSON.stringify(redactConfig(config));
      expect(logged).not.toContain('s3cret-proxy');
      expect(logged).toContain('proxy.corp.example:3128');
      expect(logged).toContain('localhost,.corp.example');
      const refused = problemsOf({ ...slackHttp, [name]: 'http://alice:s3cret-proxy@[bad' });
      expect(refused).toEqual([expect.stringMatching(new RegExp(`^${name}: not a proxy URL`))]);
      expect(refused.join('\n')).not.toContain('s3cret-proxy');
    }
    expect(problemsOf({ ...slackHttp, HTTPS_PROXY: 'proxy.corp.example:3128' })).toEqual([
      expect.stringContaining('HTTPS_PROXY: not a proxy URL'),
    ]);
  });
});
