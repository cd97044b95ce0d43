import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackRequester } from '../src/sandbox/slack-requests.ts';
import { startWebApiServer, type WebApiServer } from '../src/sandbox/web-api-server.ts';
import { Workspace } from '../src/sandbox/workspace.ts';
import { createSimulator, type Simulator } from '../src/simulator/simulator.ts';
import { AppProcess, type Exit, freePort } from './helpers/app-process.ts';
import { TEST_DATABASES } from './helpers/databases.ts';
import { isRequestMessage, SIGNING_SECRET, waitFor } from './helpers/harness.ts';

// A rolling deploy, as an operator runs one: two replicas on one Postgres behind a load balancer
// that sends only to replicas whose /readyz answers 200, people submitting /approve all along and
// decisions arriving, while each replica is SIGTERMed and started again in turn. Nothing may be
// lost, posted twice or left unanswered.

const postgres = TEST_DATABASES.find((d) => d.name === 'postgres');
const skipReason = postgres?.skipReason;
const GRACE_MS = 15_000;

/** A loopback load balancer: round robin over ready replicas, retrying one that refuses. */
function startLoadBalancer(replicas: () => AppProcess[]) {
  const ready = new Set<number>();
  const answers: Array<{ status: number; ms: number }> = [];
  const probe = setInterval(() => {
    for (const r of replicas())
      void fetch(`http://127.0.0.1:${r.port}/readyz`).then(
        (res) => (res.status === 200 ? ready.add(r.port) : ready.delete(r.port)),
        () => ready.delete(r.port),
      );
  }, 100);
  let next = 0;
  const forward = (
    port: number,
    req: { method: string; url: string; headers: IncomingHttpHeaders },
    body: Buffer,
  ) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        const out = request(
          { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                headers: res.headers,
                body: Buffer.concat(chunks),
              }),
            );
          },
        );
        out.on('error', reject);
        out.end(body);
      },
    );
  const server: Server = createServer((req, res) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const ports = [...ready];
      for (let i = 0; i < ports.length; i++) {
        const port = ports[(next + i) % ports.length] as number;
        try {
          const answer = await forward(
            port,
            { method: req.method ?? 'POST', url: req.url ?? '/', headers: req.headers },
            body,
          );
          next++;
          answers.push({ status: answer.status, ms: performance.now() - started });
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
          return;
        } catch {
          ready.delete(port); // refused: it is gone; try the next one
        }
      }
      answers.push({ status: 503, ms: performance.now() - started });
      res.writeHead(503);
      res.end();
    });
  });
  return {
    answers,
    ready,
    async listen() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    },
    async close() {
      clearInterval(probe);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.skipIf(skipReason)(
  `a rolling deploy of two replicas on Postgres${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let sim: Simulator;
    let workspace: Workspace;
    let api: WebApiServer;
    let drop: () => Promise<void>;
    let url: string;

    beforeAll(async () => {
      if (!postgres) throw new Error('no postgres');
      const created = await postgres.create();
      drop = created.drop;
      url = created.url;
      sim = await createSimulator({ port: 0 });
      workspace = new Workspace({
        people: sim.people.map((p) => ({ login: p.login, name: p.name, locale: 'en-US' })),
      });
      api = await startWebApiServer(workspace);
    });
    afterAll(async () => {
      await api?.close();
      await sim?.close();
      await drop?.();
    });

    it('loses nothing, posts nothing twice and leaves no request unanswered while each replica is restarted in turn', async () => {
      const replica = async () =>
        new AppProcess({
          SLACK_BOT_TOKEN: workspace.botToken,
          SLACK_SIGNING_SECRET: SIGNING_SECRET,
          SLACK_API_URL: api.apiUrl,
          PORT: String(await freePort()),
          APPROVAL_BASE_URL: sim.url,
          APPROVAL_APP_NAME: 'slack-approvals',
          APPROVAL_APP_KEY: 'sandbox-app-key',
          DATABASE_URL: url,
          STATUS_POLL_CRON: '* * * * * *',
          LOG_LEVEL: 'warn',
          SHUTDOWN_GRACE_MS: String(GRACE_MS),
          SHUTDOWN_DRAIN_MS: '1000',
          APPROVAL_TIMEOUT_MS: '5000',
          ANNOUNCEMENT_LEASE_SECONDS: '6',
          SLACK_TIMEOUT_MS: '2000',
          SLACK_CHANNEL_INTERVAL_MS: '200',
        });
      const running = [await replica(), await replica()];
      const balancer = startLoadBalancer(() => running);
      const slack = new SlackRequester({
        workspace,
        eventsUrl: await balancer.listen(),
        signingSecret: SIGNING_SECRET,
        responseOrigin: api.origin,
      });
      const exits: Array<Exit & { ms: number }> = [];
      try {
        await Promise.all(running.map((r) => r.start()));
        await waitFor(() => balancer.ready.size === 2, 120_000, 'both replicas ready');

        // People: an /approve and its submission every 1.5 s; the service decides what is open.
        let traffic = true;
        const sam = workspace.userByLogin('sam.taylor@corp.example').id;
        const general = workspace.channelByName('general').id;
        const people = (async () => {
          for (let i = 0; traffic; i++) {
            const before = new Set(workspace.views.keys());
            await slack.command(sam, general, `Rolling ${i}`);
            const view = await waitFor(
              () =>
                [...workspace.views.values()].find(
                  (v) => !before.has(v.id) && JSON.stringify(v.view).includes('Suggested approver'),
                ),
              5000,
              `the form of request ${i}`,
            );
            await slack.submitView(view.id, { note_input: 'n' });
            for (const a of sim.approvals())
              if (a.decision === 'pending') sim.decide(a.djbh, 'agree');
            await new Promise((r) => setTimeout(r, 1500));
          }
        })();

        // Starting an approval takes the service a second, so a SIGTERM can land while one is
        // under way: each stop is timed to come 300 ms into a call (on either replica).
        sim.setFaults('start-approval', { latencyMs: 1000 });
        for (const index of [0, 1]) {
          await new Promise((r) => setTimeout(r, 3000));
          const calls = sim.requestCounts()['start-approval'];
          await waitFor(() => sim.requestCounts()['start-approval'] > calls, 120_000, 'a start');
          await new Promise((r) => setTimeout(r, 300));
          const old = running[index] as AppProcess;
          const stopping = performance.now();
          const exit = await old.stop();
          if (exit) exits.push({ ...exit, ms: performance.now() - stopping });
          const fresh = await replica();
          await fresh.start();
          running[index] = fresh;
          await waitFor(() => balancer.ready.has(fresh.port), 120_000, 'the new replica ready');
        }
        await new Promise((r) => setTimeout(r, 3000));
        traffic = false;
        await people;
        sim.clearFaults();

        // Every approval the service started shows in Slack once, with its decision once.
        const started = sim.approvals();
        expect(started.length).toBeGreaterThan(8);
        for (const a of started) sim.decide(a.djbh, 'agree');
        await waitFor(
          () =>
            started.every(
              (a) =>
                workspace.messages.filter((m) => isRequestMessage(m, a.djbh)).length >= 1 &&
                workspace.messages.some(
                  (m) =>
                    m.threadTs &&
                    m.text.includes('Approved') &&
                    workspace.messages.some(
                      (p) => p.ts === m.threadTs && isRequestMessage(p, a.djbh),
                    ),
                ),
            ),
          30_000,
          'every request and decision in Slack',
        );
        await new Promise((r) => setTimeout(r, 2000));
        for (const a of started) {
          const requests = workspace.messages.filter((m) => isRequestMessage(m, a.djbh));
          expect(requests, a.djbh).toHaveLength(1);
          const decisions = workspace.messages.filter(
            (m) => m.threadTs === requests[0]?.ts && m.text.includes('Approved'),
          );
          expect(decisions, a.djbh).toHaveLength(1);
        }
        // Slack's view: every request answered 200, within its 3 s.
        expect(balancer.answers.length).toBeGreaterThanOrEqual(started.length * 2);
        expect(balancer.answers.filter((a) => a.status !== 200)).toEqual([]);
        expect(balancer.answers.filter((a) => a.ms > 3000)).toEqual([]);
        // Each replica exited cleanly, within its grace period.
        expect(exits).toHaveLength(2);
        for (const exit of exits) {
          expect(exit).toMatchObject({ code: 0, signal: null });
          expect(exit.ms).toBeLessThan(GRACE_MS);
        }
        for (const r of running)
          expect(r.output.join('')).not.toContain('approval started but not stored');
      } finally {
        for (const r of running) await r.kill();
        await balancer.close();
      }
    }, 240_000);
  },
);
