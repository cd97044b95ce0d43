import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAnnouncementDispatcher } from '../src/approvals/announcement-dispatcher.ts';
import type { Announcer } from '../src/approvals/announcer.ts';
import { createLiveness, DELIVERY_LOOP } from '../src/liveness.ts';
import { createProbes } from '../src/probes.ts';
import { createApprovalStores } from '../src/store/approval-stores.ts';
import { type DatabaseHandle, openDatabase } from '../src/store/database.ts';
import { TEST_DATABASES } from './helpers/databases.ts';
import { waitFor } from './helpers/harness.ts';
import { sampleApproval } from './helpers/outbox-seed.ts';

// Liveness tells the truth: the outbox's delivery stuck on a database that refuses writes fails
// /healthz after the limit (so the pod is restarted), is logged, and /healthz recovers with it.

let dir: string;
let db: DatabaseHandle;
let server: Server | undefined;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'liveness-'));
  db = await openDatabase(join(dir, 'a.db'));
});
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe('liveness', () => {
  it('fails /healthz while delivery has work due and the database refuses writes for longer than the limit, and passes again once it writes', async () => {
    const store = createApprovalStores(db.db, db.dialect);
    const posted: string[] = [];
    const announcer: Announcer = {
      async deliver(a) {
        posted.push(a.id);
        return { channel: 'C1', ts: `1.${posted.length}` };
      },
      findDelivered: async () => undefined,
      checkCredentials: async () => 'ok',
    };
    // The loop's clock for how long it has gone without progress: moved by the test, so that
    // the first /healthz passes however slowly a busy machine gets to it.
    let monotonic = 0;
    const dispatcher = createAnnouncementDispatcher(
      { store, announcer, logger: quiet, now: () => new Date(), monotonic: () => monotonic },
      {
        leaseMs: 60_000,
        callTimeoutMs: 1000,
        retryForMs: 86_400_000,
        laneIntervalMs: 0,
        concurrency: 4,
        idleMs: 20,
      },
    );
    const logged: string[] = [];
    const liveness = createLiveness(300, {
      error: (_obj, msg) => logged.push(msg),
      info: (_obj, msg) => logged.push(msg),
    });
    liveness.watch(DELIVERY_LOOP, dispatcher.sinceProgressMs);
    const probes = createProbes({
      db: db.db as unknown as Kysely<never>,
      registry: new Registry(),
      lastServiceOk: () => Date.now(),
      phase: () => 'serving',
      liveness,
    });
    const listening = createServer((_req, res) => probes.healthz(res));
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const healthz = async () => {
      const response = await fetch(
        `http://127.0.0.1:${(listening.address() as AddressInfo).port}/`,
      );
      return { status: response.status, body: await response.json() };
    };
    const now = new Date();
    await store.createApproval(
      sampleApproval('STUCKxxxxxxx', { request: { createdAt: now } }),
      now,
    );
    // A full disk or a read-only file: the outbox reads, nothing can be claimed or recorded.
    await sql`pragma query_only = 1`.execute(db.db);
    dispatcher.start();
    try {
      expect((await healthz()).status).toBe(200);
      monotonic += 1000; // past the limit (300 ms), the database still refusing every write
      const stuck = await waitFor(
        async () => {
          const answer = await healthz();
          return answer.status === 503 ? answer : undefined;
        },
        10_000,
        '/healthz failing',
      );
      expect(stuck.body).toMatchObject({ ok: false, stuck: { delivery: expect.any(String) } });
      expect(posted).toEqual([]);
      expect(logged).toContain(
        'a background loop has made no progress for too long: /healthz fails so that the process is restarted',
      );
      await sql`pragma query_only = 0`.execute(db.db);
      await waitFor(async () => (await healthz()).status === 200, 10_000, '/healthz passing');
      await waitFor(() => posted.length === 2, 10_000, 'the announcements posted');
      expect(logged).toContain('the background loop makes progress again');
    } finally {
      await dispatcher.stop();
    }
  });
});

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');

describe.skipIf(postgres?.skipReason)('readiness', () => {
  it('answers from its last check while one slow query holds every connection, instead of waiting for it (or failing)', async () => {
    if (!postgres) throw new Error('no postgres');
    const created = await postgres.create();
    const handle = await openDatabase(created.url, { poolSize: 1 });
    const probes = createProbes({
      db: handle.db as unknown as Kysely<never>,
      registry: new Registry(),
      lastServiceOk: () => Date.now(),
      phase: () => 'serving',
    });
    const slow = createServer((_req, res) => void probes.readyz(res));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const readyz = () => fetch(`http://127.0.0.1:${(slow.address() as AddressInfo).port}/`);
    try {
      expect((await readyz()).status).toBe(200);
      // One slow query takes the pool's only connection.
      let slowQueryDone = false;
      const holding = sql`select pg_sleep(3)`.execute(handle.db).finally(() => {
        slowQueryDone = true;
      });
      await new Promise((r) => setTimeout(r, 100));
      const answer = await readyz();
      expect(slowQueryDone).toBe(false);
      expect(answer.status).toBe(200);
      await holding;
    } finally {
      await new Promise((resolve) => slow.close(resolve));
      await handle.close();
      await created.drop();
    }
  });
});
