import { describe, expect, it } from 'vitest';
import { harnessPerTest, waitFor } from './helpers/harness.ts';

// What /metrics says about approvals themselves, scraped from the admin port after approvals were
// started and decided through Slack and the service's simulator; checked by name.

const harness = harnessPerTest();
const lineOf = (text: string, series: string) =>
  text.split('\n').find((line) => line.startsWith(`${series} `));

describe('approval metrics', () => {
  it('counts starts, decisions, their times and what is open, with no person or title in a label', async () => {
    const h = await harness({ env: { ADMIN_PORT: '0' } });
    const scrape = async () => (await fetch(`http://127.0.0.1:${h.app.adminPort}/metrics`)).text();
    const before = await scrape();
    // Every series there from the start, at 0.
    expect(
      lineOf(before, 'slack_approvals_approvals_started_total{entry_point="form",template="none"}'),
    ).toMatch(/ 0$/);
    expect(lineOf(before, 'slack_approvals_approvals_decided_total{outcome="approved"}')).toMatch(
      / 0$/,
    );

    const decided = await h.startApproval('sam.taylor@corp.example', 'general', 'New storage node');
    await h.startApproval('sam.taylor@corp.example', 'general', 'Second monitor');
    h.sim.decide(decided.approval.djbh, 'agree');
    await h.app.poll();
    const text = await waitFor(
      async () => {
        const t = await scrape();
        return lineOf(t, 'slack_approvals_decision_reply_seconds_count') ===
          'slack_approvals_decision_reply_seconds_count 1'
          ? t
          : undefined;
      },
      5000,
      'the decision reply counted',
    );
    expect(
      lineOf(text, 'slack_approvals_approvals_started_total{entry_point="form",template="none"}'),
    ).toBe('slack_approvals_approvals_started_total{entry_point="form",template="none"} 2');
    expect(lineOf(text, 'slack_approvals_approvals_decided_total{outcome="approved"}')).toMatch(
      / 1$/,
    );
    expect(lineOf(text, 'slack_approvals_approvals_decided_total{outcome="rejected"}')).toMatch(
      / 0$/,
    );
    expect(lineOf(text, 'slack_approvals_time_to_decision_working_hours_count')).toMatch(/ 1$/);
    // Decided within seconds: in the first bucket.
    expect(
      lineOf(text, 'slack_approvals_time_to_decision_working_hours_bucket{le="0.25"}'),
    ).toMatch(/ 1$/);
    expect(lineOf(text, 'slack_approvals_open_approvals{age="under-1d"}')).toMatch(/ 1$/);
    for (const age of ['1d-3d', '3d-7d', 'over-7d'])
      expect(lineOf(text, `slack_approvals_open_approvals{age="${age}"}`)).toMatch(/ 0$/);
    const approvalSeries = text
      .split('\n')
      .filter((l) =>
        /^slack_approvals_(approvals_|time_to_decision|decision_reply|open_approvals)/.test(l),
      );
    expect(approvalSeries.join('\n')).not.toMatch(/corp\.example|storage|monitor|U0/i);
  });
});
