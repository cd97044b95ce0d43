import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startApplication } from '../src/app.ts';
import { createApprovalServiceClient } from '../src/approval-service/approval-service-client.ts';
import { loadConfig } from '../src/config.ts';
import { SlackFaults } from '../src/sandbox/slack-faults.ts';
import { startWebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { createSimulator } from '../src/simulator/simulator.ts';
import { type ApprovalStores, createApprovalStores } from '../src/store/approval-stores.ts';
import { openDatabase } from '../src/store/database.ts';
import { seedApproval } from '../test/helpers/outbox-seed.ts';
import { emptyScratchDatabase } from './scratch-database.ts';
import { rows, verdict } from './table.ts';

const TICK_MS = 1000;

export interface DeliveryBenchOptions {
  /** Replicas of the app sharing the database (more than one needs Postgres). */
  replicas: number;
  /** The database; a scratch Postgres database for several replicas (its tables are emptied). */
  databaseUrl?: string;
}

/**
 * `count` decisions in one channel that Slack limits to one post per second (HTTP 429 with
 * Retry-After beyond that), and one decision in another channel at the same moment. The real app
 * (one or more replicas on one database) polls on its own schedule (every second here) and
 * delivers in the background, as in production.
 * Targets, one replica: ≥ 0.9 posts/s, no duplicates, no losses, the other channel's decision
 * posted within one tick of being recorded, no poll pass longer than one tick meanwhile.
 * Several replicas (issue 19): ≥ 0.95 posts/s, ≤ 1 % of posts answered 429, no reply out of
 * order, no duplicate, the other channel's decision within one tick.
 */
export async function deliveryBench(
  count: number,
  options: DeliveryBenchOptions = { replicas: 1 },
): Promise<void> {
  const fleet = options.replicas > 1;
  const sim = await createSimulator({ port: 0 });
  const workspace = new Workspace({
    people: [{ login: 'a@corp.example', name: 'A' }],
    channels: [
      { name: 'busy', appIsMember: true },
      { name: 'other', appIsMember: true },
    ],
  });
  const faults = new SlackFaults();
  faults.channelPostsPerSecond = 1;
  const api = await startWebApiServer(workspace, 0, faults.interceptor);
  const dir = mkdtempSync(join(tmpdir(), 'bench-delivery-'));
  const databaseUrl = options.databaseUrl ?? join(dir, 'delivery.db');
  const passes: number[] = [];
  const logs = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as { msg?: string; ms?: number };
        if (entry.msg === 'poll pass' && entry.ms !== undefined) passes.push(entry.ms);
      }
      callback();
    },
  });
  const seeded = await openDatabase(databaseUrl);
  await emptyScratchDatabase(seeded);
  const store = createApprovalStores(seeded.db, seeded.dialect);
  const service = createApprovalServiceClient({
    baseUrl: sim.url,
    appName: 'slack-approvals',
    appKey: 'sandbox-app-key',
  });
  const busy = workspace.channelByName('busy').id;
  const other = workspace.channelByName('other').id;
  const user = workspace.userByLogin('a@corp.example').id;
  const approvals: Array<{ djbh: string; channel: string; ts: string }> = [];
  for (let i = 0; i <= count; i++) {
    const channel = i < count ? busy : other;
    approvals.push(await seedPosted(store, service, workspace, { channel, user, i }));
  }
  // Seeded before the apps start, so their background delivery does not race the seeding.
  const apps = [];
  for (let r = 0; r < options.replicas; r++)
    apps.push(
      await startApplication(
        loadConfig({
          SLACK_BOT_TOKEN: workspace.botToken,
          SLACK_SIGNING_SECRET: 'bench-signing-secret',
          SLACK_API_URL: api.apiUrl,
          PORT: '0',
          APPROVAL_BASE_URL: sim.url,
          APPROVAL_APP_NAME: 'slack-approvals',
          APPROVAL_APP_KEY: 'sandbox-app-key',
          DATABASE_URL: databaseUrl,
          STATUS_POLL_CRON: '* * * * * *',
          LOG_LEVEL: 'debug',
        }),
        { logDestination: logs },
      ),
    );
  // Let one pass see them all pending, then decide them all at once.
  await new Promise((r) => setTimeout(r, 2 * TICK_MS));
  const limitedBefore = faults.rateLimited.length;
  passes.length = 0;
  for (const a of approvals) sim.decide(a.djbh, 'agree');
  const decided = () =>
    approvals.map((a) =>
      workspace.replies(a.channel, a.ts).filter((m) => m.text.includes('Approved')),
    );
  const deadline = performance.now() + count * 3000;
  while (decided().some((r) => r.length === 0) && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 2 * TICK_MS));

  const replies = decided();
  const lost = replies.filter((r) => r.length === 0).length;
  const duplicates = replies.reduce((n, r) => n + Math.max(0, r.length - 1), 0);
  const busyTimes = replies
    .slice(0, count)
    .flat()
    .map((m) => Number(m.ts) * 1000)
    .sort((x, y) => x - y);
  const first = busyTimes[0] ?? 0;
  const last = busyTimes.at(-1) ?? 0;
  const postsPerSecond = last > first ? ((busyTimes.length - 1) * 1000) / (last - first) : 0;
  const limited = faults.rateLimited.length - limitedBefore;
  const limitedShare = busyTimes.length > 0 ? (100 * limited) / busyTimes.length : 0;
  const outOfOrder = await repliesOutOfOrder(seeded, workspace, approvals);
  const lone = approvals[count];
  const loneRecorded = (await store.pendingAnnouncements(10_000))
    .concat(await store.failedAnnouncements(10_000))
    .find((a) => a.id === `${lone?.djbh}:decision:approved`);
  const loneReply = replies[count]?.[0];
  const loneRecordedAt =
    loneRecorded?.createdAt.getTime() ?? (await recordedAt(seeded, lone?.djbh));
  const otherMs = loneReply ? Number(loneReply.ts) * 1000 - loneRecordedAt : Number.NaN;
  const longestPass = Math.max(0, ...passes);
  const who = fleet ? `${options.replicas} replicas on one Postgres` : 'one replica';
  const floor = fleet ? 0.95 : 0.9;
  rows.push({
    case: `delivery, ${who}: ${count} decisions in one channel limited to 1 post/s`,
    n: busyTimes.length,
    'ms total': (last - first).toFixed(0),
    'posts/s': postsPerSecond.toFixed(2),
    target: [
      `${verdict(postsPerSecond, floor, true)} posts/s`,
      `lost ${lost}, duplicates ${duplicates} ${lost + duplicates === 0 ? 'ok (0)' : 'WRONG (> 0)'}`,
      `429s ${limited} (${limitedShare.toFixed(1)} %)${fleet ? ` ${verdict(limitedShare, 1)} %` : ''}`,
      `out of order ${outOfOrder} ${outOfOrder === 0 ? 'ok (0)' : 'WRONG (> 0)'}`,
    ].join('; '),
  });
  rows.push({
    case: `delivery, ${who}: a decision in another channel meanwhile, recorded → posted`,
    n: loneReply ? 1 : 0,
    'ms total': otherMs.toFixed(0),
    target: `${verdict(otherMs, TICK_MS)} ms (one tick)`,
  });
  rows.push({
    case: `delivery, ${who}: longest poll pass while the busy channel drains`,
    n: passes.length,
    'ms total': longestPass.toFixed(0),
    target: `${verdict(longestPass, TICK_MS)} ms (one tick)`,
  });
  await seeded.close();
  for (const app of apps) await app.stop();
  await api.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Threads whose replies did not appear in the order their announcements were recorded (the
 * database's numbering, `seq`), over every approval's thread.
 */
async function repliesOutOfOrder(
  db: Awaited<ReturnType<typeof openDatabase>>,
  workspace: Workspace,
  approvals: Array<{ channel: string; ts: string }>,
): Promise<number> {
  const rows = await db.db.selectFrom('announcements').select(['id', 'seq']).execute();
  const rank = new Map(rows.map((row) => [row.id, Number(row.seq)]));
  let wrong = 0;
  for (const a of approvals) {
    const ranks = workspace
      .replies(a.channel, a.ts)
      .map((m) => rank.get(String(m.metadata?.event_payload.announcement_id ?? '')) ?? -1)
      .filter((r) => r >= 0);
    if (ranks.some((r, i) => i > 0 && r < (ranks[i - 1] ?? -1))) wrong++;
  }
  return wrong;
}

/** When the decision of `djbh` was recorded (its announcement's creation), from the database. */
async function recordedAt(
  db: Awaited<ReturnType<typeof openDatabase>>,
  djbh: string | undefined,
): Promise<number> {
  const row = await db.db
    .selectFrom('announcements')
    .select('created_at')
    .where('id', '=', `${djbh}:decision:approved`)
    .executeTakeFirst();
  return Number(row?.created_at ?? Number.NaN);
}

/** An approval started in the service whose request message is already in its channel. */
async function seedPosted(
  store: ApprovalStores,
  service: ReturnType<typeof createApprovalServiceClient>,
  workspace: Workspace,
  { channel, user, i }: { channel: string; user: string; i: number },
): Promise<{ djbh: string; channel: string; ts: string }> {
  const { djbh } = await service.startApproval({
    requester: 'a@corp.example',
    approver: 'b@corp.example',
    title: `Bench ${i}`,
    note: 'n',
  });
  const posted = await workspace.call('chat.postMessage', { channel, text: `Request ${djbh}` });
  const ts = String(posted.ts);
  await seedApproval(
    store,
    {
      djbh,
      teamId: workspace.teamId,
      slack: { channelId: channel },
      parties: {
        requester: { slackId: user, login: 'a@corp.example' },
        approver: { login: 'b@corp.example', slackId: null },
      },
      request: { title: `Bench ${i}`, note: 'n', locale: 'en-US', createdAt: new Date() },
    },
    { posted: { channel, ts } },
  );
  return { djbh, channel, ts };
}
