import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createAnnouncementDispatcher,
  retryDelayMs,
  storeBackoffMs,
} from '../../src/approvals/announcement-dispatcher.ts';
import { AnnounceError, type Announcer } from '../../src/approvals/announcer.ts';
import { createLanePacer } from '../../src/approvals/lane-pacer.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { sampleApproval } from '../helpers/outbox-seed.ts';

// The dispatcher's own rules, on a real SQLite store with an announcer that records its calls.

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
let dir: string;
let db: DatabaseHandle;
let store: ApprovalStores;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dispatcher-'));
  db = await openDatabase(join(dir, 'a.db'));
  store = createApprovalStores(db.db, db.dialect);
  const now = new Date();
  await store.createApproval(
    sampleApproval('AAAAAAAAAAAa', {
      parties: { approver: { slackId: 'U2' } },
      request: { createdAt: now },
    }),
    now,
  );
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const options = {
  leaseMs: 600,
  callTimeoutMs: 200,
  retryForMs: 86_400_000,
  laneIntervalMs: 0,
  concurrency: 4,
  idleMs: 1000,
};

describe('the announcement dispatcher', () => {
  it('starts no call after the attempt’s deadline (lease − 2 × call timeout), and retries later', async () => {
    const calls: string[] = [];
    const announcer: Announcer = {
      async deliver(a, _approval, attempt) {
        // A slow first step (a lookup), then the post: by then the deadline (200 ms) has passed.
        await new Promise((r) => setTimeout(r, 300));
        attempt.check();
        calls.push(a.id);
        return { channel: 'C1', ts: '1.1' };
      },
      findDelivered: async () => undefined,
      checkCredentials: async () => 'ok',
    };
    const dispatcher = createAnnouncementDispatcher(
      { store, announcer, logger: quiet, now: () => new Date() },
      options,
    );
    const counts = await dispatcher.drain();
    expect(calls).toEqual([]);
    expect(counts.retried).toBe(2);
    const pending = await store.pendingAnnouncements(10);
    expect(pending.map((a) => a.lastError)).toEqual([
      'the attempt ran out of time before its next call',
      'the attempt ran out of time before its next call',
    ]);
  });

  it('treats an unknown error as passing and uncertain: the next attempt looks for the post first', async () => {
    let looked = 0;
    let failFirst = true;
    const announcer: Announcer = {
      async deliver() {
        if (failFirst) {
          failFirst = false;
          throw new Error('connection reset by the database');
        }
        return { channel: 'C1', ts: '1.2' };
      },
      async findDelivered() {
        looked++;
        return undefined;
      },
      checkCredentials: async () => 'ok',
    };
    const dispatcher = createAnnouncementDispatcher(
      { store, announcer, logger: quiet, now: () => new Date(), random: () => 0 },
      { ...options, leaseMs: 60_000, concurrency: 1 },
    );
    const first = await dispatcher.drain();
    expect(first.retried).toBe(1);
    const [retrying] = (await store.pendingAnnouncements(10)).filter((a) => a.lastError);
    expect(retrying?.uncertain).toBe(true);
    await dispatcher.drain(new Date(Date.now() + 60_000));
    expect(looked).toBe(1);
    // Everything went out in the end: the retried one, and the edit its thread link queued.
    expect(await store.pendingAnnouncements(10)).toEqual([]);
  });

  it('paces a lane after a call that may have posted, as after a post, so the next one is not too soon', async () => {
    const announcer: Announcer = {
      async deliver() {
        throw new AnnounceError('HTTP 503 after Slack took the post', {
          retryable: true,
          uncertain: true,
        });
      },
      findDelivered: async () => undefined,
      checkCredentials: async () => 'ok',
    };
    const dispatcher = createAnnouncementDispatcher(
      { store, announcer, logger: quiet, now: () => new Date() },
      { ...options, leaseMs: 60_000, laneIntervalMs: 5000 },
    );
    await dispatcher.pass();
    const paces = await db.db.selectFrom('lane_leases').select(['lane', 'next_post_at']).execute();
    const channel = paces.find((p) => p.lane.startsWith('post:'));
    expect(Number(channel?.next_post_at) - Date.now()).toBeGreaterThan(4000);
  });

  it('gives an announcement claimed ahead of its lane’s pace back untouched when stopped while it waits', async () => {
    const posted: string[] = [];
    const announcer: Announcer = {
      async deliver(a) {
        posted.push(a.id);
        return { channel: 'C1', ts: '1.1' };
      },
      findDelivered: async () => undefined,
      checkCredentials: async () => 'ok',
    };
    // Every lane of the approval may post again only in 1.5 s.
    const dispatcher = createAnnouncementDispatcher(
      { store, announcer, logger: quiet, now: () => new Date() },
      { ...options, leaseMs: 60_000, laneLookaheadMs: 2000 },
    );
    const lanes = (await store.deliverable(new Date(), { limit: 10, skipLanes: [] })).map(
      (d) => d.lane,
    );
    const at = Date.now() + 1500;
    for (const lane of lanes)
      await db.db
        .insertInto('lane_leases')
        .values({ lane, token: null, lease_until: null, next_post_at: at })
        .execute();
    const passing = dispatcher.pass();
    await new Promise((r) => setTimeout(r, 100));
    await dispatcher.stop();
    await passing;
    expect(posted).toEqual([]);
    const pending = await store.pendingAnnouncements(10);
    expect(pending.map((a) => a.kind).sort()).toEqual(['approver-dm', 'request']);
    // Given back: unleased and as certain as before (nothing was called), the pace kept.
    expect(pending.every((a) => !a.uncertain)).toBe(true);
    // Not held for the rest of their lease: the next attempt may take them once the pace allows.
    expect(await store.deliverable(new Date(), { limit: 10, skipLanes: [] })).toHaveLength(2);
    const paces = await db.db.selectFrom('lane_leases').select(['next_post_at', 'token']).execute();
    expect(paces).toHaveLength(lanes.length);
    for (const pace of paces) {
      expect(pace.token).toBeNull();
      expect(Number(pace.next_post_at)).toBeGreaterThanOrEqual(at);
    }
  });

  it('keeps delivering after one failed read of the outbox', async () => {
    const posted: string[] = [];
    let failures = 1;
    const dispatcher = createAnnouncementDispatcher(
      {
        store: {
          ...store,
          async deliverable(...args) {
            if (failures-- > 0) throw new Error('Connection terminated unexpectedly');
            return store.deliverable(...args);
          },
        },
        announcer: recording(posted),
        logger: quiet,
        now: () => new Date(),
        random: () => 0,
      },
      { ...options, idleMs: 20 },
    );
    dispatcher.start();
    try {
      await vi.waitFor(() => expect(posted).toHaveLength(2), { timeout: 5000, interval: 20 });
    } finally {
      await dispatcher.stop();
    }
  });

  it('keeps the event loop turning while the database reads but refuses writes, and resumes when it writes again', async () => {
    const posted: string[] = [];
    let claims = 0;
    let timerFired = false;
    const refusing = {
      ...store,
      async claimAnnouncement(...args: Parameters<typeof store.claimAnnouncement>) {
        claims++;
        // Without a backoff the loop would claim in a spin that never lets a timer fire: after
        // this many, let it through so that the test fails instead of hanging.
        if (claims > 200 && !timerFired) await new Promise((r) => setTimeout(r, 0));
        return store.claimAnnouncement(...args);
      },
    };
    const dispatcher = createAnnouncementDispatcher(
      {
        store: refusing,
        announcer: recording(posted),
        logger: quiet,
        now: () => new Date(),
        random: () => 0,
      },
      { ...options, idleMs: 20 },
    );
    // A full disk or a read-only file: reads answer, every write fails.
    await sql`pragma query_only = 1`.execute(db.db);
    dispatcher.start();
    try {
      await new Promise((r) => setTimeout(r, 50));
      timerFired = true;
      const claimsBeforeTheTimer = claims;
      expect(claimsBeforeTheTimer).toBeGreaterThan(0);
      expect(claimsBeforeTheTimer).toBeLessThan(10);
      expect(posted).toEqual([]);
      expect(dispatcher.sinceProgressMs()).toBeGreaterThanOrEqual(50);
      await sql`pragma query_only = 0`.execute(db.db);
      await vi.waitFor(() => expect(posted).toHaveLength(2), { timeout: 5000, interval: 20 });
      expect(dispatcher.sinceProgressMs()).toBeLessThan(5000);
    } finally {
      await dispatcher.stop();
    }
  });

  it('ends a drain at a store error instead of claiming again in a spin', async () => {
    let claims = 0;
    const dispatcher = createAnnouncementDispatcher(
      {
        store: {
          ...store,
          async claimAnnouncement(...args: Parameters<typeof store.claimAnnouncement>) {
            claims++;
            return store.claimAnnouncement(...args);
          },
          // A spin would never end by itself: past this many claims the outbox looks empty, so
          // that the test fails rather than hangs.
          async deliverable(...args: Parameters<typeof store.deliverable>) {
            return claims > 200 ? [] : store.deliverable(...args);
          },
        },
        announcer: recording([]),
        logger: quiet,
        now: () => new Date(),
      },
      options,
    );
    await sql`pragma query_only = 1`.execute(db.db);
    const counts = await dispatcher.drain();
    await sql`pragma query_only = 0`.execute(db.db);
    expect(counts.sent).toBe(0);
    expect(claims).toBeLessThanOrEqual(options.concurrency);
  });

  it('backs off from store errors from half a second to at most 30 s, with jitter between half and all', () => {
    expect(storeBackoffMs(1, () => 1)).toBe(500);
    expect(storeBackoffMs(1, () => 0)).toBe(250);
    expect(storeBackoffMs(3, () => 1)).toBe(2000);
    expect(storeBackoffMs(100, () => 1)).toBe(30_000);
  });

  it('backs off exponentially from 2 s to at most 10 minutes, with jitter between half and all', () => {
    expect(retryDelayMs(1, () => 1)).toBe(2000);
    expect(retryDelayMs(1, () => 0)).toBe(1000);
    expect(retryDelayMs(4, () => 1)).toBe(16_000);
    expect(retryDelayMs(30, () => 1)).toBe(600_000);
  });
});

function recording(posted: string[]): Announcer {
  return {
    async deliver(a) {
      posted.push(a.id);
      return { channel: 'C1', ts: `1.${posted.length}` };
    },
    findDelivered: async () => undefined,
    checkCredentials: async () => 'ok',
  };
}

describe('the lane pacer', () => {
  it('holds a lane for the interval after a post and for Retry-After after a 429', () => {
    let now = 0;
    const pacer = createLanePacer(1000, () => now);
    pacer.posted('post:C1');
    pacer.pause('post:C2', 5000);
    expect(pacer.waitingLanes().sort()).toEqual(['post:C1', 'post:C2']);
    expect(pacer.nextReadyInMs()).toBe(1000);
    now = 1000;
    expect(pacer.waitingLanes()).toEqual(['post:C2']);
    now = 5000;
    expect(pacer.waitingLanes()).toEqual([]);
    expect(pacer.nextReadyInMs()).toBeUndefined();
  });
});
