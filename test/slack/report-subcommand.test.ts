import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
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
    expect(shown).toContain('Still open, whenever started: 0 (0 waiting over a week)');
    expect(shown).toContain('• maria.lopez@corp.example: 1 decided');
    // The department comes from the service's lookup.
    expect(shown).toContain('• Infrastructure 基础架构部: 1 decided');
    // Never a title.
    expect(shown).not.toContain('New storage node');
  });

  it('counts every request still open, however long ago it started, beside the last 30 days', async () => {
    let offset = 0;
    const hh = await harness({ now: () => new Date(Date.now() + offset) });
    await hh.startApproval(SAM);
    // Forty days on, it still waits: outside the 30 days the figures cover, and what matters most.
    offset = 40 * 86_400_000;
    const id = hh.user(TOM);
    const mine = () => hh.workspace.messages.filter((m) => m.ephemeralTo === id);
    const response = await hh.slack.command(id, hh.channel('general'), 'report');
    expect(response.status).toBe(200);
    const shown = (await waitFor(() => mine()[0], 5000, 'the answer')).text ?? '';
    expect(shown).toContain('0 started');
    expect(shown).toContain('Still open, whenever started: 1 (1 waiting over a week)');
  });

  it('names the channel in npm run report -- export when the bot token is set, asking Slack once per channel', async () => {
    const hh = await harness();
    await hh.startApproval(SAM);
    await hh.startApproval(SAM, 'general', 'Second monitor');
    const asked = hh.workspace.callsOf('conversations.info').length;
    const { stdout } = await promisify(execFile)('npm', ['run', '-s', 'report', '--', 'export'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/',
        DATABASE_URL: hh.env.DATABASE_URL,
        SLACK_BOT_TOKEN: hh.env.SLACK_BOT_TOKEN,
        SLACK_API_URL: hh.env.SLACK_API_URL,
      },
    });
    const [header, ...rows] = stdout.trimEnd().split('\n');
    const column = header?.split(',').indexOf('channel_name') ?? -1;
    expect(column).toBeGreaterThan(0);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.split(',')[column]).toBe('general');
    expect(hh.workspace.callsOf('conversations.info').length - asked).toBe(1);
  }, 120_000);
});
