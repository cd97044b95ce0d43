import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackApiError } from '../../src/sandbox/workspace.ts';
import { TEST_DATABASES } from '../helpers/databases.ts';
import { type Harness, startHarness } from '../helpers/harness.ts';

// HTTP mode behind a load balancer: two replicas of the app share one Postgres database.
// Polling at the same moment, they must neither miss a decision nor post it twice.

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
const skipReason = postgres?.skipReason;

describe.skipIf(skipReason)(
  `two replicas on Postgres${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let h: Harness;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      if (!postgres) throw new Error('no postgres');
      const database = await postgres.create();
      drop = database.drop;
      h = await startHarness({ databaseUrl: database.url });
    });
    afterAll(async () => {
      await h?.close();
      await drop?.();
    });

    it('announces each decision once when both replicas poll and deliver at the same moment', async () => {
      const replica = await h.startReplica();
      const started = [];
      for (const title of ['One', 'Two', 'Three'])
        started.push(await h.startApproval('sam.taylor@corp.example', 'general', title));
      for (const { approval } of started) h.sim.decide(approval.djbh, 'agree');
      // Slack refuses thread posts for a moment, so the decisions are recorded but not yet posted…
      h.workspace.beforeCall = (method, args) => {
        if (method === 'chat.postMessage' && args.thread_ts) throw new SlackApiError('ratelimited');
      };
      await Promise.all([h.app.poll(), replica.poll()]);
      h.workspace.beforeCall = undefined;
      // …then both replicas deliver the same pending announcements at the same moment, once
      // their retries are due.
      const later = new Date(Date.now() + 15 * 60_000);
      await Promise.all([
        h.app.deliver(later),
        replica.deliver(later),
        h.app.deliver(later),
        replica.deliver(later),
      ]);
      await Promise.all([h.app.poll(later), replica.poll(later)]);
      for (const { parent } of started) {
        const replies = h.workspace.replies(parent.channel, parent.ts);
        expect(replies.filter((m) => m.text.includes('Approved'))).toHaveLength(1);
      }
    });

    it('records a handover once and tells the thread and the new approver once when both replicas see it', async () => {
      const replica = await h.startReplica();
      const started = [];
      for (const title of ['Four', 'Five', 'Six'])
        started.push(await h.startApproval('sam.taylor@corp.example', 'general', title));
      await Promise.all([h.app.poll(), replica.poll()]);
      for (const { approval } of started) h.sim.reassign(approval.djbh, 'alex.kim@corp.example');
      const later = new Date(Date.now() + 60_000);
      await Promise.all([h.app.poll(later), replica.poll(later)]);
      const after = new Date(later.getTime() + 15 * 60_000);
      await Promise.all([h.app.poll(after), replica.poll(after)]);
      await Promise.all([h.app.deliver(after), replica.deliver(after)]);
      const alex = h.user('alex.kim@corp.example');
      for (const { approval, parent } of started) {
        const notes = h.workspace
          .replies(parent.channel, parent.ts)
          .filter((m) => m.text.includes('handed this'));
        expect(notes).toHaveLength(1);
        const dms = h.workspace.messages.filter(
          (m) =>
            m.metadata?.event_payload.announcement_id === `${approval.djbh}:approver-dm@1` &&
            h.workspace.channels.get(m.channel)?.members.has(alex),
        );
        expect(dms).toHaveLength(1);
      }
    });

    it('answers /readyz with 503 when the database is gone (and /healthz stays 200, so it is not restarted), so the load balancer takes it out', async () => {
      expect((await fetch(`http://127.0.0.1:${h.app.port}/readyz`)).status).toBe(200);
      await drop();
      const response = await fetch(`http://127.0.0.1:${h.app.port}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        ok: false,
        database: 'unreachable',
        approvalService: 'answering',
      });
      expect((await fetch(`http://127.0.0.1:${h.app.port}/healthz`)).status).toBe(200);
    });
  },
);
