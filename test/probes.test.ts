import { describe, expect, it } from 'vitest';
import { harnessPerTest, waitFor } from './helpers/harness.ts';

// /healthz and /readyz, and /metrics on the admin port (ADMIN_PORT).

const harness = harnessPerTest();

describe('probes and metrics', () => {
  it('is alive and ready once serving with the database and the service answering', async () => {
    const h = await harness();
    const base = `http://127.0.0.1:${h.app.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, approvalService: 'answering' });
  });

  it('shows the counters moving after one approval', async () => {
    const h = await harness({ env: { ADMIN_PORT: '0' } });
    const base = `http://127.0.0.1:${h.app.adminPort}`;
    const before = await (await fetch(`${base}/metrics`)).text();
    expect(before).not.toContain('slack_approvals_delivery_attempts_total{kind="request"');
    const { approval } = await h.startApproval();
    h.sim.decide(approval.djbh, 'agree');
    await h.app.poll();
    const response = await fetch(`${base}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    for (const line of [
      'slack_approvals_delivery_attempts_total{kind="request",outcome="sent"} 1',
      'slack_approvals_delivery_attempts_total{kind="decision",outcome="sent"} 1',
      'slack_approvals_service_calls_total{endpoint="start-approval",outcome="ok"} 1',
      'slack_approvals_announcements{state="sent",kind="request"} 1',
      'slack_approvals_announcements_failed_total',
      'slack_approvals_due_backlog',
      'slack_approvals_delivery_stalled_seconds',
      'slack_approvals_service_call_seconds_bucket',
      'slack_approvals_delivery_attempt_seconds_count',
    ])
      expect(text).toContain(line);
    expect(text).toMatch(
      /slack_approvals_service_calls_total\{endpoint="approval-status",outcome="ok"\} [1-9]/,
    );
  });

  it('counts Slack API errors of the background delivery by method and code', async () => {
    const h = await harness({ env: { ADMIN_PORT: '0' } });
    h.workspace.failNext('chat.postMessage', 'channel_not_found');
    await h.startApproval('sam.taylor@corp.example', 'general', 'Counted');
    const text = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    expect(text).toContain(
      'slack_approvals_slack_api_errors_total{method="chat.postMessage",code="channel_not_found"} 1',
    );
  });

  it('tells how long the oldest undelivered announcement and the most overdue check have waited', async () => {
    let clock = new Date('2026-11-23T09:00:00Z');
    const h = await harness({ now: () => clock, env: { ADMIN_PORT: '0' } });
    const metric = async (name: string) => {
      const text = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    expect(await metric('slack_approvals_oldest_pending_announcement_age_seconds')).toBe(0);
    expect(await metric('slack_approvals_oldest_overdue_check_seconds')).toBe(0);
    // Slack holds the channel's posts back for an hour: the request stays undelivered.
    h.faults.rateLimit('chat.postMessage', 3600, 10);
    const view = await h.openModal('sam.taylor@corp.example');
    await h.slack.submitView(view.id, { note_input: 'n' });
    await waitFor(() => h.sim.approvals()[0], 5000, 'the approval in the service');
    await waitFor(
      async () =>
        (await metric('slack_approvals_announcements{state="pending",kind="request"}')) === 1,
      5000,
      'the request recorded',
    );
    clock = new Date(clock.getTime() + 90_000);
    expect(await metric('slack_approvals_oldest_pending_announcement_age_seconds')).toBe(90);
    // Nobody ran a pass since: the approval's first check has been due since it was recorded.
    expect(await metric('slack_approvals_oldest_overdue_check_seconds')).toBe(90);
    expect(await metric('slack_approvals_service_up')).toBe(1);
    expect(await metric('slack_approvals_db_pool_waiting')).toBe(0);
    expect(await metric('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
  });

  it('says the approval service is down when it has not answered', async () => {
    const h = await harness({ env: { APPROVAL_BASE_URL: 'http://127.0.0.1:1', ADMIN_PORT: '0' } });
    const text = await (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    expect(text).toMatch(/^slack_approvals_service_up 0$/m);
  });

  it('listens only where HOST says', async () => {
    const reach = async (url: string) =>
      fetch(url).then(
        (r) => r.status,
        () => 'unreachable',
      );
    const everywhere = await harness();
    expect(await reach(`http://[::1]:${everywhere.app.port}/healthz`)).toBe(200);
    expect(await reach(`http://127.0.0.1:${everywhere.app.port}/healthz`)).toBe(200);
    await everywhere.close();
    const loopback4 = await harness({ env: { HOST: '127.0.0.1' } });
    expect(await reach(`http://127.0.0.1:${loopback4.app.port}/healthz`)).toBe(200);
    expect(await reach(`http://[::1]:${loopback4.app.port}/healthz`)).toBe('unreachable');
  });

  it('logs once when the approval service stops answering and once when it is back, and stays ready', async () => {
    const h = await harness();
    await h.startApproval();
    const lines = (msg: string) => h.logs.entries().filter((e) => e.msg === msg).length;
    h.sim.setFaults('approval-status', { outage: true });
    await h.app.poll(new Date(Date.now() + 60_000));
    await h.app.poll(new Date(Date.now() + 120_000));
    expect(lines('the approval service is not answering; forms say so and checks back off')).toBe(
      1,
    );
    expect((await fetch(`http://127.0.0.1:${h.app.port}/readyz`)).status).toBe(200);
    h.sim.clearFaults();
    await h.app.poll(new Date(Date.now() + 3_600_000));
    await h.app.poll(new Date(Date.now() + 7_200_000));
    expect(lines('the approval service answers again')).toBe(1);
  });
});
