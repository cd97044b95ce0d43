import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type LogCapture, startHarness, waitFor } from '../helpers/harness.ts';
import { type SocketModeApp, startSocketModeApp } from '../helpers/socket-mode-app.ts';

// Requests Slack really sends, taken from Slack's documentation and the Slack SDKs' captured test
// fixtures (test/fixtures/slack-payloads, each file naming its source), replayed as Slack would
// deliver them: signed over HTTP, and as Socket Mode envelopes. Each must be answered as Slack
// expects within its 3 s, none refused, and nothing may end in a stack trace.

interface Fixture {
  name: string;
  source: string;
  /** How Slack posts it over HTTP: a JSON body, a form, or the form field `payload` holding JSON. */
  http: 'json' | 'form' | 'payload';
  /** The Socket Mode envelope type it arrives in; null for what Slack sends over HTTP only. */
  socket: 'events_api' | 'interactive' | 'slash_commands' | null;
  /** Slack sends it without signature headers (the ssl_check probe). */
  unsigned?: boolean;
  expect?: { challenge?: string };
  body: Record<string, unknown> | string;
}

const FIXTURES_DIR = new URL('../fixtures/slack-payloads/', import.meta.url);
const SLACK_ACK_LIMIT_MS = 3000;
const FORM = 'application/x-www-form-urlencoded';

const fixtures: Fixture[] = readdirSync(FIXTURES_DIR)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => ({
    name: file.replace(/\.json$/, ''),
    ...(JSON.parse(readFileSync(new URL(file, FIXTURES_DIR), 'utf8')) as Omit<Fixture, 'name'>),
  }));

/** The body and content type exactly as Slack posts the fixture over HTTP. */
function httpRequest(fixture: Fixture): { raw: string; contentType: string } {
  switch (fixture.http) {
    case 'json':
      return { raw: JSON.stringify(fixture.body), contentType: 'application/json' };
    case 'form':
      return { raw: String(fixture.body), contentType: FORM };
    case 'payload':
      return {
        raw: new URLSearchParams({ payload: JSON.stringify(fixture.body) }).toString(),
        contentType: FORM,
      };
  }
}

/** The envelope's `payload`: a form's fields as an object (slash commands), else the JSON. */
function socketPayload(fixture: Fixture): Record<string, unknown> {
  return typeof fixture.body === 'string'
    ? Object.fromEntries(new URLSearchParams(fixture.body))
    : fixture.body;
}

/** Resolves once the log has stopped growing for `quietMs`: the listeners' slow work is done. */
async function settled(logs: LogCapture, quietMs = 300): Promise<void> {
  let count = -1;
  let since = Date.now();
  await waitFor(
    () => {
      if (logs.lines.length !== count) {
        count = logs.lines.length;
        since = Date.now();
      }
      return Date.now() - since >= quietMs;
    },
    20_000,
    'the listeners to finish',
  );
}

/**
 * Log lines that say a payload was mishandled though answered: refused as malformed, or left to
 * the safety net that acknowledges at 2.5 s whatever no listener did (which must not pass).
 */
function mishandled(lines: string[]): string[] {
  return lines.filter((line) =>
    /slack request refused|slack envelope refused|no listener acknowledged in time/.test(line),
  );
}

/** Log lines that carry a stack trace: a failure nobody handled. */
function stackTraces(logs: LogCapture): string[] {
  return logs.lines.filter((line) => /\\n\s+at |"stack"/.test(line));
}

describe('the corpus of genuine Slack payloads', () => {
  it('holds at least 40 payloads, each naming where it came from', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(40);
    for (const fixture of fixtures) {
      expect(fixture.source, fixture.name).toMatch(/\S/);
      expect(['json', 'form', 'payload'], fixture.name).toContain(fixture.http);
    }
  });
});

describe('over HTTP, signed as Slack signs them', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it.each(fixtures.map((f) => [f.name, f] as const))(
    'answers %s as Slack expects within 3 s',
    async (_name, fixture) => {
      const { raw, contentType } = httpRequest(fixture);
      const seen = h.logs.lines.length;
      const started = Date.now();
      const response = fixture.unsigned
        ? await fetch(`http://127.0.0.1:${h.app.port}/slack/events`, {
            method: 'POST',
            headers: { 'content-type': contentType },
            body: raw,
          }).then(async (r) => ({ status: r.status, body: await r.text() }))
        : await h.slack.send(raw, contentType);
      expect(Date.now() - started).toBeLessThan(SLACK_ACK_LIMIT_MS);
      expect(response.status).toBe(200);
      if (fixture.expect?.challenge)
        expect(JSON.parse(response.body)).toEqual({ challenge: fixture.expect.challenge });
      expect(mishandled(h.logs.lines.slice(seen))).toEqual([]);
    },
  );

  it('ended no request in a stack trace or a refusal', async () => {
    await settled(h.logs);
    expect(stackTraces(h.logs)).toEqual([]);
    expect(h.logs.lines.filter((l) => l.includes('slack request refused'))).toEqual([]);
  });
});

describe('over Socket Mode, as envelopes', () => {
  let s: SocketModeApp;
  beforeAll(async () => {
    s = await startSocketModeApp();
  });
  afterAll(async () => {
    await s?.close();
  });

  const overSocket = fixtures.filter(
    (f): f is Fixture & { socket: NonNullable<Fixture['socket']> } => f.socket !== null,
  );

  it.each(overSocket.map((f) => [f.name, f] as const))(
    'acknowledges %s within 3 s',
    async (_name, fixture) => {
      const seen = s.logs.lines.length;
      const started = Date.now();
      const acked = await Promise.race([
        s.socket.deliver(fixture.socket, socketPayload(fixture)).then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), SLACK_ACK_LIMIT_MS)),
      ]);
      expect(acked, 'acknowledged at all').toBe(true);
      expect(Date.now() - started).toBeLessThan(SLACK_ACK_LIMIT_MS);
      expect(mishandled(s.logs.lines.slice(seen))).toEqual([]);
    },
  );

  it('ended no envelope in a stack trace', async () => {
    await settled(s.logs);
    expect(stackTraces(s.logs)).toEqual([]);
  });
});
