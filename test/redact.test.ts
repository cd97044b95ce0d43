import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, redactConfig } from '../src/config.ts';
import { MASK, redactText, redactUrl } from '../src/redact.ts';
import { openDatabase } from '../src/store/database.ts';
import { TEST_DATABASES } from './helpers/databases.ts';

const SECRET = 'Hunter2secret';

// Every form pg accepts a password in (pg-connection-string reads the URL's userinfo and any
// query parameter, after re-encoding what URL parsing would refuse), and forms it refuses but an
// operator may still type: each must come out without the password and with what helps (the
// user and host, where the form lets them be found).
const CASES: Array<{ url: string; keeps: string[] }> = [
  {
    url: `postgres://app:${SECRET}@db:5432/approvals`,
    keeps: ['postgres://app:', '@db:5432/approvals'],
  },
  { url: `postgresql://app:${SECRET}@db/approvals`, keeps: ['@db/approvals'] },
  { url: `postgres://app@db/approvals?password=${SECRET}`, keeps: ['postgres://app@db/approvals'] },
  {
    url: `postgres://app@db/approvals?sslmode=require&password=${SECRET}&x=1`,
    keeps: ['sslmode=require', '&x=1'],
  },
  { url: `postgres://app@db/approvals?PASSWORD=${SECRET}`, keeps: ['@db/approvals'] },
  { url: `postgres://app@db/approvals?sslpassword=${SECRET}`, keeps: ['@db/approvals'] },
  // Characters URL parsing refuses or reads as something else, left unescaped in the password.
  { url: `postgres://app:${SECRET}#x@db/approvals`, keeps: ['@db/approvals'] },
  { url: `postgres://app:${SECRET}/x@db/approvals`, keeps: ['@db/approvals'] },
  { url: `postgres://app:${SECRET}?x@db/approvals`, keeps: ['@db/approvals'] },
  { url: `postgres://app:${SECRET}@x@db/approvals`, keeps: ['@db/approvals'] },
  { url: `postgres://app:${SECRET} x@db/approvals`, keeps: ['@db/approvals'] },
  { url: `postgres://app@db/approvals?password=${SECRET}#frag&more`, keeps: ['@db/approvals'] },
  // A parameter's name percent-encoded (pg reads parameters through URLSearchParams, which decodes
  // names), and a parameter's value with a space (pg re-encodes it: the password is both words).
  { url: `postgres://app@db/approvals?%70assword=${SECRET}`, keeps: ['@db/approvals'] },
  {
    url: `postgres://app@db/approvals?ssl%50assword=${SECRET}&x=1`,
    keeps: ['@db/approvals', '&x=1'],
  },
  {
    url: `postgres://app@db/approvals?password=two ${SECRET}&x=1`,
    keeps: ['@db/approvals', '&x=1'],
  },
  // Percent-encoded, as a careful operator writes it.
  { url: `postgres://app:${SECRET}%23x@db/approvals`, keeps: ['@db/approvals'] },
  // libpq's key=value form.
  {
    url: `host=db user=app password=${SECRET} dbname=approvals`,
    keeps: ['host=db', 'dbname=approvals'],
  },
];

describe('hiding secrets', () => {
  it.each(CASES)('hides the password of $url', ({ url, keeps }) => {
    const shown = redactUrl(url);
    expect(shown).not.toContain(SECRET);
    expect(shown).toContain(MASK);
    for (const kept of keeps) expect(shown).toContain(kept);
  });

  it('leaves what holds no password as it is', () => {
    for (const url of [
      './data/approvals.db',
      ':memory:',
      'postgres://app@db/approvals',
      '/tmp/x.db',
    ])
      expect(redactUrl(url)).toBe(url);
  });

  it('hides a URL and its password, written or decoded, wherever a message quotes them', () => {
    const url = `postgres://app:${SECRET}%21@db/approvals`;
    const message = `cannot parse ${url}; password ${SECRET}%21 or ${SECRET}! refused`;
    const shown = redactText(message, [url]);
    expect(shown).not.toContain(SECRET);
    expect(shown).toContain('postgres://app:***@db/approvals');
  });

  it('hides the password of every URL in the printed configuration, not only the database’s', () => {
    // A proxy in front of the service or of Slack's Web API may take basic auth in the URL (axios
    // and Node's http send it): the configuration dump must not print it.
    const printed = JSON.stringify(
      redactConfig(
        loadConfig({
          SLACK_BOT_TOKEN: 'xoxb-1-secret-bot',
          SLACK_SIGNING_SECRET: 'signing-secret-value',
          SLACK_API_URL: `https://bot:${SECRET}1@slack-proxy.example/api/`,
          APPROVAL_BASE_URL: `https://slack:${SECRET}2@approvals.example/`,
          APPROVAL_WEB_URL: `https://web:${SECRET}3@approvals.example/ui/`,
          APPROVAL_APP_NAME: 'slack',
          APPROVAL_APP_KEY: 'app-key-secret',
          DATABASE_URL: './data/approvals.db',
        }),
      ),
    );
    expect(printed).not.toContain(SECRET);
    for (const kept of ['slack-proxy.example/api/', 'https://slack:***@approvals.example/'])
      expect(printed).toContain(kept);
  });

  it('hides the database password and every token in the printed configuration, in every form', () => {
    for (const { url } of CASES.filter((c) => c.url.startsWith('postgres'))) {
      const printed = JSON.stringify(
        redactConfig(
          loadConfig({
            SLACK_BOT_TOKEN: 'xoxb-1-secret-bot',
            SLACK_SIGNING_SECRET: 'signing-secret-value',
            APPROVAL_BASE_URL: 'http://approvals.example',
            APPROVAL_APP_NAME: 'slack',
            APPROVAL_APP_KEY: 'app-key-secret',
            DATABASE_URL: url,
          }),
        ),
      );
      for (const secret of [SECRET, 'xoxb-1-secret-bot', 'signing-secret-value', 'app-key-secret'])
        expect(printed).not.toContain(secret);
    }
  });

  it('never names the password where the database is opened or refused', async () => {
    // The "database ready" line logs `location`; a refusal is a DatabaseError naming it.
    const unreachable = [
      `postgres://app@127.0.0.1:1/approvals?password=${SECRET}`,
      `postgres://app:${SECRET}#x@127.0.0.1:1/approvals`,
      `postgres://app:${SECRET}@127.0.0.1:1/approvals`,
    ];
    for (const url of unreachable) {
      const error = await openDatabase(url).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(/^Could not open the database at /);
      expect(error?.message).not.toContain(SECRET);
      expect(JSON.stringify(error)).not.toContain(SECRET);
    }
  });

  it('never takes a connection string for a SQLite path, which would print its password and make folders of it', async () => {
    const strings = [
      // URL schemes compare case-insensitively; pg opens this one.
      `POSTGRES://app:${SECRET}@127.0.0.1:1/approvals`,
      // A scheme the app does not open, and libpq's key=value form (pg does not read it).
      `pg://app:${SECRET}@127.0.0.1:1/approvals`,
      `host=127.0.0.1 port=1 user=app password=${SECRET} dbname=approvals`,
    ];
    for (const url of strings) {
      const opened = await openDatabase(url).then(
        async (db) => {
          await db.close();
          return db.location;
        },
        (e: unknown) => e as Error,
      );
      expect(opened).toBeInstanceOf(Error);
      expect((opened as Error).message).toMatch(/^Could not open the database at /);
      expect(JSON.stringify({ message: (opened as Error).message, opened })).not.toContain(SECRET);
      expect(existsSync(resolve(url.split('/')[0] ?? url))).toBe(false);
    }
  });

  it.skipIf(!process.env.TEST_POSTGRES_URL)(
    'names an open Postgres without the password given as a parameter',
    async () => {
      const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
      const created = await postgres?.create();
      if (!created) throw new Error('no Postgres to test against');
      const url = new URL(created.url);
      url.searchParams.set('password', SECRET);
      const database = await openDatabase(url.toString());
      try {
        expect(database.location).not.toContain(SECRET);
        expect(database.location).toContain('password=***');
      } finally {
        await database.close();
        await created.drop();
      }
    },
  );
});
