import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewTrackedApproval } from '../../src/approvals/tracked-approval.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { openDatabase } from '../../src/store/database.ts';
import { newApproval, type Overrides } from '../helpers/approval-builder.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { type Harness, harnessPerTest } from '../helpers/harness.ts';
import { seedApproval } from '../helpers/outbox-seed.ts';

// A conversation is one lane: whatever the reason the app posts into someone's DM (a request
// asked there and its thread, the replies that fall back to the requester's DM, the approver's
// reminders, the leader's escalation), Slack paces that DM as one conversation, so the app must
// too. Measured at the Slack stand-in: the gaps between the posts that reached the DM.

const harness = harnessPerTest();
const INTERVAL_MS = 400;
const SAM = 'sam.taylor@corp.example';
const MARIA = 'maria.lopez@corp.example';

async function withStore<T>(h: Harness, use: (store: ApprovalStores) => Promise<T>): Promise<T> {
  const db = await openDatabase(h.env.DATABASE_URL);
  try {
    return await use(createApprovalStores(db.db, db.dialect));
  } finally {
    await db.close();
  }
}

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(`conversations as lanes on ${database.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    beforeAll(async () => {
      created = await database.create();
    });
    afterAll(async () => {
      await created?.drop();
    });

    it('paces one person’s DM as one lane, whether a request was asked there, a reply fell back to it, or it is their approver or leader DM', async () => {
      const h = await harness({
        databaseUrl: created.url,
        env: { SLACK_CHANNEL_INTERVAL_MS: String(INTERVAL_MS), DELIVERY_CONCURRENCY: '8' },
      });
      const sam = h.user(SAM);
      const maria = h.user(MARIA);
      const samDm = h.workspace.appDm(sam).id;
      const general = h.channel('general');
      const now = new Date();
      const approval = (djbh: string, overrides: Overrides<NewTrackedApproval>) =>
        newApproval(
          {
            djbh,
            teamId: h.workspace.teamId,
            request: { title: `Lane ${djbh}`, note: 'n', locale: 'en-US', createdAt: now },
            parties: {
              requester: { slackId: sam, login: SAM },
              approver: { login: MARIA, slackId: maria },
            },
            slack: { channelId: general },
          },
          overrides,
        );
      const decide = (store: ApprovalStores, djbh: string) =>
        store.recordDecision(djbh, {
          decision: 'approved',
          decidedBy: null,
          ended: true,
          now,
          nextCheckAt: new Date(now.getTime() + 3_600_000),
        });
      await withStore(h, async (store) => {
        for (const i of [1, 2]) {
          // Asked in Sam's DM: the request and its thread are there (post:D… before).
          const inDm = `DMASKED0000${i}`;
          const request = await h.workspace.call('chat.postMessage', {
            channel: samDm,
            text: inDm,
          });
          await seedApproval(store, approval(inDm, { slack: { channelId: samDm } }), {
            posted: { channel: samDm, ts: String(request.ts) },
          });
          await decide(store, inDm);
          // The request could not be posted: its decision falls back to Sam's DM (requester:U…).
          const failed = `FALLBACK000${i}`;
          await seedApproval(store, approval(failed, {}), { failed: 'invalid_blocks' });
          await decide(store, failed);
          // Sam approves Maria's request: the reminder goes to Sam's DM (dm:<login> before).
          const asApprover = `APPROVER000${i}`;
          const parent = await h.workspace.call('chat.postMessage', {
            channel: general,
            text: asApprover,
          });
          await seedApproval(
            store,
            approval(asApprover, {
              parties: {
                requester: { slackId: maria, login: MARIA },
                approver: { login: SAM, slackId: sam },
              },
            }),
            { posted: { channel: general, ts: String(parent.ts) } },
          );
          await store.recordReminder(asApprover, 1, now);
          // Escalated to Sam as Maria's approver's leader: the DM goes to Sam too.
          const asLeader = `LEADER00000${i}`;
          const led = await h.workspace.call('chat.postMessage', {
            channel: general,
            text: asLeader,
          });
          await seedApproval(
            store,
            approval(asLeader, { parties: { requester: { slackId: maria, login: MARIA } } }),
            { posted: { channel: general, ts: String(led.ts) } },
          );
          await store.recordEscalation(asLeader, {
            to: { login: SAM, chatId: sam },
            afterReminders: 0,
            answerWithinMs: 0,
            now,
          });
        }
      });

      await h.app.deliver();

      const postsToSam = h.workspace
        .callsOf('chat.postMessage')
        .filter(
          (c) =>
            JSON.stringify(c.args).includes('announcement_id') &&
            (c.response as { ok?: boolean; channel?: string }).ok &&
            (c.response as { channel?: string }).channel === samDm,
        );
      const routes = postsToSam.map((c) => JSON.stringify(c.args).match(/[A-Z]+0+\d:[a-z-]+/)?.[0]);
      // Both of Sam's approvals are told in one reminder digest (one reminder DM a day per approver),
      // and both escalated to him in one escalation DM (a leader gets their escalations together).
      expect(routes.sort()).toEqual([
        'APPROVER0001:reminder',
        'DMASKED00001:decision',
        'DMASKED00002:decision',
        'FALLBACK0001:decision',
        'FALLBACK0002:decision',
        'LEADER000001:escalation',
      ]);
      const escalationDm = postsToSam.find((c) => JSON.stringify(c.args).includes(':escalation'));
      for (const djbh of ['LEADER000001', 'LEADER000002'])
        expect(JSON.stringify(escalationDm?.args.blocks)).toContain(djbh);
      const times = postsToSam.map((c) => c.at).sort((a, b) => a - b);
      const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
      expect(
        Math.min(...gaps),
        `gaps between posts to Sam's DM: ${gaps.join(', ')}`,
      ).toBeGreaterThanOrEqual(INTERVAL_MS);
    }, 60_000);
  });
}
