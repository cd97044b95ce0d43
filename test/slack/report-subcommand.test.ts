import { describe, expect, it } from 'vitest';
import { harnessPerTest, waitFor } from '../helpers/harness.ts';

// `/approve report` through signed requests to the app, against the Slack stand-in and the
// service's simulator: workspace admins and owners see the figures, anyone else a refusal.

const harness = harnessPerTest();
const SAM = 'sam.taylor@corp.example';
const LI = 'li.wei@corp.example';
// A workspace admin in the stand-in (users.info is_admin).
const TOM = 'tom.baker@corp.example';

describe('/approve report', () => {
  it('refuses anyone but the workspace’s admins, in their language, and shows an admin the figures', async () => {
    const hh = await harness();
    const { approval } = await hh.startApproval(SAM);
    hh.sim.decide(approval.djbh, 'agree');
    await hh.app.poll();
    /** The next ephemeral message the person gets after running /approve report. */
    const reportFor = async (login: string) => {
      const id = hh.user(login);
      const mine = () => hh.workspace.messages.filter((m) => m.ephemeralTo === id);
      const before = mine().length;
      const response = await hh.slack.command(id, hh.channel('general'), 'report');
      expect(response.status).toBe(200);
      return (await waitFor(() => mine()[before], 5000, `the answer to ${login}`)).text ?? '';
    };

    const refused = await reportFor(SAM);
    expect(refused).toContain('for its admins and owners only');
    expect(refused).not.toContain('maria.lopez');
    expect(await reportFor(LI)).toContain('仅工作区管理员和所有者可查看');

    const shown = await reportFor(TOM);
    expect(shown).toContain('Approvals started in the last 30 days');
    expect(shown).toContain('1 started · 100% of those decided were approved');
    expect(shown).toContain('Open: 0 (0 waiting over a week)');
    expect(shown).toContain('• maria.lopez@corp.example: 1 decided');
    // The department comes from the service's lookup.
    expect(shown).toContain('• Infrastructure 基础架构部: 1 decided');
    // Never a title.
    expect(shown).not.toContain('New storage node');
  });
});
