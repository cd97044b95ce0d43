import { WebClient } from '@slack/web-api';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnnouncementDispatcher } from '../../src/approvals/announcement-dispatcher.ts';
import type { ApprovalStatus } from '../../src/approvals/approval-types.ts';
import { pollOnce } from '../../src/poller/poll-once.ts';
import { startWebApiServer, type WebApiServer } from '../../src/sandbox/web-api-server.ts';
import { SlackApiError, Workspace } from '../../src/sandbox/workspace.ts';
import { createSlackAnnouncer } from '../../src/slack/delivery/slack-announcer.ts';
import { createIdentities } from '../../src/slack/people/identities.ts';
import { createSlackPeople } from '../../src/slack/people/slack-people.ts';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { type ApprovalStores, createApprovalStores } from '../../src/store/approval-stores.ts';
import { type DatabaseHandle, openDatabase } from '../../src/store/database.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';

// Announcements go out in the order they were recorded in the database, whatever clock the code
// that recorded them read. A poll pass reads `now` once, when it starts; a fact it records at the
// end of a slow pass must still come after what the dispatcher recorded meanwhile.

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const T0 = Date.parse('2026-11-25T09:00:00Z');
const DJBH = 'ORDER0000001';

for (const database of TEST_DATABASES) {
  describe.skipIf(database.skipReason)(`the recorded order on ${database.name}`, () => {
    let created: { url: string; drop(): Promise<void> };
    let handle: DatabaseHandle;
    let store: ApprovalStores;
    let workspace: Workspace;
    let api: WebApiServer;

    beforeAll(async () => {
      created = await database.create();
      handle = await openDatabase(created.url);
      store = createApprovalStores(handle.db, handle.dialect);
    });
    afterAll(async () => {
      await handle?.close();
      await created?.drop();
    });
    beforeEach(async () => {
      // Sam asks; the approver (maria) is not on Slack, so her DM finds her unreachable.
      workspace = new Workspace({
        people: [{ login: 'sam@corp.example', name: 'Sam' }],
        channels: [{ name: 'general', appIsMember: true }],
      });
      api = await startWebApiServer(workspace, 0);
    });
    afterEach(async () => {
      await api.close();
      for (const table of ['announcements', 'tracked_approvals', 'lane_leases'] as const)
        await handle.db.deleteFrom(table).execute();
    });

    it('posts a decision a poll pass recorded after "the approver cannot be reached" after it, though the pass started before', async () => {
      let t = T0;
      const client = new WebClient(workspace.botToken, {
        slackApiUrl: api.apiUrl,
        retryConfig: { retries: 0 },
        rejectRateLimitedCalls: true,
      });
      const people = createSlackPeople(client, () => t);
      const dispatcher = createAnnouncementDispatcher(
        {
          store,
          announcer: createSlackAnnouncer({
            client,
            people,
            identities: createIdentities({
              people,
              links: createAccountLinkStore(handle.db, handle.dialect),
            }),
            channelLanguage: 'en',
            giveUpAfterDays: 30,
          }),
          logger: quiet,
          now: () => new Date(t),
          random: () => 0.5,
        },
        {
          leaseMs: 60_000,
          callTimeoutMs: 5000,
          retryForMs: 86_400_000,
          laneIntervalMs: 0,
          concurrency: 4,
          idleMs: 1000,
        },
      );
      const general = workspace.channelByName('general').id;
      await store.createApproval(
        {
          djbh: DJBH,
          teamId: workspace.teamId,
          slack: { channelId: general },
          parties: {
            requester: {
              slackId: workspace.userByLogin('sam@corp.example').id,
              login: 'sam@corp.example',
            },
            approver: { login: 'maria@corp.example', slackId: null },
          },
          request: { title: 'Order', note: 'n', locale: 'en-US', createdAt: new Date(T0) },
        },
        new Date(T0),
      );
      // Slack is briefly unavailable for the channel: the request message waits for a retry.
      workspace.beforeCall = (method, args) => {
        if (method === 'chat.postMessage' && (args as { channel?: string }).channel === general)
          throw new SlackApiError('service_unavailable');
      };

      // A poll pass starts at T0 + 1 s; the service is slow to answer it.
      t = T0 + 1000;
      let answer: (status: ApprovalStatus) => void = () => {};
      const answered = new Promise<ApprovalStatus>((resolve) => {
        answer = resolve;
      });
      let asked = () => {};
      const checking = new Promise<void>((resolve) => {
        asked = resolve;
      });
      const pass = pollOnce(
        {
          store,
          service: {
            getStatus: () => {
              asked();
              return answered;
            },
          },
          logger: quiet,
        },
        {
          concurrency: 1,
          maxIntervalMs: 600_000,
          giveUpAfterMs: 86_400_000,
          passBudgetMs: 45_000,
          leaseMs: 52_000,
        },
        new Date(t),
      );
      await checking;
      // Meanwhile the dispatcher finds the approver unreachable and records it.
      t = T0 + 5000;
      await dispatcher.drain();
      expect((await store.pendingAnnouncements(100)).map((a) => a.id)).toContain(
        `${DJBH}:approver-unreachable`,
      );
      // Then the service answers: the pass records the decision, after that.
      answer({ decision: 'approved', ended: true, unknown: false });
      await pass;

      // Slack is back: the request goes out, then its thread.
      workspace.beforeCall = undefined;
      t = T0 + 600_000;
      await dispatcher.drain();
      const parent = workspace.messages.find(
        (m) => m.channel === general && !m.threadTs && m.metadata,
      );
      expect(parent).toBeDefined();
      const thread = workspace
        .replies(general, parent?.ts ?? '')
        .map((m) => String(m.metadata?.event_payload.announcement_id));
      expect(thread).toEqual([`${DJBH}:approver-unreachable`, `${DJBH}:decision:approved`]);
    });
  });
}
