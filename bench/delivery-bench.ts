import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startApplication } from '../src/app.ts';
import { createApprovalServiceClient } from '../src/approval-service/approval-service-client.ts';
import type { ApprovalStore } from '../src/approvals/approval-store.ts';
import { loadConfig } from '../src/config.ts';
import { SlackFaults } from '../src/sandbox/slack-faults.ts';
import { startWebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { createSimulator } from '../src/simulator/simulator.ts';
import { createApprovalStore } from '../src/store/approval-store.ts';
import { openDatabase } from '../src/store/database.ts';
import { seedApproval } from '../test/helpers/outbox-seed.ts';
import { rows, verdict } from './table.ts';

const TICK_MS = 1000;

/**
 * `count` decisions in one channel that Slack limits to one post per second (HTTP 429 with
 * Retry-After beyond that), and one decision in another channel at the same moment. The real app
 * polls on its own schedule (every second here) and delivers in the background, as in production.
 * Targets: ≥ 0.9 posts/s in the busy channel, no duplicates, no losses; the other channel's
 * decision posted within one tick of being recorded; no poll pass longer than one tick meanwhile.
 */
export async function deliveryBench(count: number): Promise<void> {
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
  const databaseUrl = join(dir, 'delivery.db');
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
  const store = createApprovalStore(seeded.db, seeded.dialect);
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
  // Seeded before the app starts, so its background delivery does not race the seeding.
  const app = await startApplication(
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
  const lone = approvals[count];
  const loneRecorded = (await store.pendingAnnouncements(10_000))
    .concat(await store.failedAnnouncements(10_000))
    .find((a) => a.id === `${lone?.djbh}:decision:approved`);
  const loneReply = replies[count]?.[0];
  const loneRecordedAt =
    loneRecorded?.createdAt.getTime() ?? (await recordedAt(seeded, lone?.djbh));
  const otherMs = loneReply ? Number(loneReply.ts) * 1000 - loneRecordedAt : Number.NaN;
  const longestPass = Math.max(0, ...passes);
  rows.push({
    case: `delivery: ${count} decisions in one channel limited to 1 post/s`,
    n: busyTimes.length,
    'ms total': (last - first).toFixed(0),
    'posts/s': postsPerSecond.toFixed(2),
    target: `${verdict(postsPerSecond, 0.9, true)} posts/s; lost ${lost}, duplicates ${duplicates} ${lost + duplicates === 0 ? 'ok (0)' : 'WRONG (> 0)'}; 429s ${faults.rateLimited.length - limitedBefore}`,
  });
  rows.push({
    case: 'delivery: a decision in another channel meanwhile, recorded → posted',
    n: loneReply ? 1 : 0,
    'ms total': otherMs.toFixed(0),
    target: `${verdict(otherMs, TICK_MS)} ms (one tick)`,
  });
  rows.push({
    case: 'delivery: longest poll pass while the busy channel drains',
    n: passes.length,
    'ms total': longestPass.toFixed(0),
    target: `${verdict(longestPass, TICK_MS)} ms (one tick)`,
  });
  await seeded.close();
  await app.stop();
  await api.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
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
  store: ApprovalStore,
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
      channelId: channel,
      requesterSlackId: user,
      requesterLogin: 'a@corp.example',
      approverLogin: 'b@corp.example',
      approverSlackId: null,
      title: `Bench ${i}`,
      note: 'n',
      locale: 'en-US',
      createdAt: new Date(),
    },
    { posted: { channel, ts } },
  );
  return { djbh, channel, ts };
}
