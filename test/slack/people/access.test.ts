import { describe, expect, it } from 'vitest';
import { type Harness, harnessPerTest, waitFor } from '../../helpers/harness.ts';

// Who may see an approval: its requester, its approver, and whoever can read the message it was
// posted in. Everyone else is answered as for a number that does not exist. Each case runs
// through the app's HTTP receiver with signed requests, against the Slack stand-in's real
// channel membership.

const harness = harnessPerTest();
const SAM = 'sam.taylor@corp.example';
const MARIA = 'maria.lopez@corp.example';
const PRIYA = 'priya.nair@corp.example';
const ALEX = 'alex.kim@corp.example';

/** Runs `/approve <text>` as `login` and returns the answer only they see. */
async function ask(hh: Harness, login: string, text: string, channelName = 'general') {
  const userId = hh.user(login);
  const seen = hh.workspace.ephemeral(userId).length;
  const response = await hh.slack.command(userId, hh.channel(channelName), text);
  expect(response.status).toBe(200);
  const answer = await waitFor(() => hh.workspace.ephemeral(userId)[seen], 5000, 'the answer');
  return { text: answer.text, blocks: answer.blocks };
}

async function openHome(hh: Harness, login: string): Promise<string> {
  const userId = hh.user(login);
  const published = hh.workspace.callsOf('views.publish').length;
  await hh.slack.event({ type: 'app_home_opened', user: userId, channel: 'D0HOME', tab: 'home' });
  await waitFor(() => hh.workspace.callsOf('views.publish').length > published);
  return JSON.stringify(hh.workspace.homes.get(userId));
}

/**
 * Sam's approval "Termination of J. Doe", asked in #project-x, a private channel of Sam and Priya
 * that the app was invited to. Maria approves; Alex is in none of it.
 */
async function privateRequest(hh: Harness) {
  hh.workspace.addChannel(
    'project-x',
    'private',
    new Set([hh.user(SAM), hh.user(PRIYA), hh.workspace.botUserId]),
  );
  const { approval, parent } = await hh.startApproval(SAM, 'project-x', 'Termination of J. Doe');
  expect(parent.channel).toBe(hh.channel('project-x'));
  return approval.djbh;
}

/** An answer with the approval number written out of it, to compare answers about two numbers. */
function withoutNumber(answer: { text: string; blocks: unknown[] }, djbh: string) {
  return JSON.stringify(answer).replaceAll(djbh, '<number>');
}

describe('/approve status', () => {
  it('answers a stranger exactly as it answers a number that does not exist', async () => {
    const hh = await harness();
    const djbh = await privateRequest(hh);
    const made = `${djbh.slice(0, -2)}zz`;
    expect(hh.sim.approvals().some((a) => a.djbh === made)).toBe(false);

    const probed = await ask(hh, ALEX, `status ${djbh}`);
    const unknown = await ask(hh, ALEX, `status ${made}`);
    expect(withoutNumber(probed, djbh)).toBe(withoutNumber(unknown, made));
    expect(JSON.stringify(probed)).not.toContain('Termination');
    expect(JSON.stringify(probed)).not.toContain(hh.user(MARIA));
  });

  it('shows the approval to its requester, its approver and a member of the channel it was posted in', async () => {
    const hh = await harness();
    const djbh = await privateRequest(hh);
    // Maria is not in #project-x: she sees it as its approver.
    expect(hh.workspace.channelByName('project-x').members.has(hh.user(MARIA))).toBe(false);
    for (const login of [SAM, MARIA, PRIYA]) {
      const answer = await ask(hh, login, `status ${djbh}`);
      expect(answer.text).toContain('Pending · 待办');
      expect(JSON.stringify(answer.blocks)).toContain('Termination of J. Doe');
    }
  });

  it('shows it to the approver the service names now, after it was given to someone else', async () => {
    const hh = await harness();
    const djbh = await privateRequest(hh);
    // Alex is in none of it, until the service's administrators make him the approver.
    expect(JSON.stringify(await ask(hh, ALEX, `status ${djbh}`))).not.toContain('Termination');
    hh.sim.reassign(djbh, ALEX);
    const alex = await ask(hh, ALEX, `status ${djbh}`);
    expect(JSON.stringify(alex.blocks)).toContain('Termination of J. Doe');
    expect(JSON.stringify(alex)).toContain(hh.user(ALEX));
  });

  it('stops showing it to someone who left the channel, once the member list is refreshed', async () => {
    let offset = 0;
    const hh = await harness({ now: () => new Date(Date.now() + offset) });
    const djbh = await privateRequest(hh);
    expect(JSON.stringify(await ask(hh, PRIYA, `status ${djbh}`))).toContain('Termination');
    hh.workspace.channelByName('project-x').members.delete(hh.user(PRIYA));
    offset += 61_000;
    expect(JSON.stringify(await ask(hh, PRIYA, `status ${djbh}`))).not.toContain('Termination');
  });

  it('keeps a request posted only in the requester’s DM to the requester and the approver', async () => {
    const hh = await harness();
    // The app is not in #random: the request goes to Sam's DM with the app.
    const { approval, parent } = await hh.startApproval(SAM, 'random', 'Salary review');
    expect(parent.channel).toBe(hh.workspace.appDm(hh.user(SAM)).id);
    const djbh = approval.djbh;
    for (const login of [SAM, MARIA])
      expect(JSON.stringify(await ask(hh, login, `status ${djbh}`))).toContain('Salary review');
    // Priya is in #random, where it was asked, but never saw the request.
    const priya = await ask(hh, PRIYA, `status ${djbh}`, 'random');
    expect(JSON.stringify(priya)).not.toContain('Salary review');
    expect(priya.text).toContain('There is no approval');
  });

  it('answers a channel member as for an unknown number, with its try-again, when Slack cannot list the channel, and still answers the requester', async () => {
    const hh = await harness();
    const djbh = await privateRequest(hh);
    hh.workspace.failNext('conversations.members', 'fetch_members_failed');
    const priya = await ask(hh, PRIYA, `status ${djbh}`);
    expect(priya.text).toContain('if you expected to see one, try again in a minute');
    expect(JSON.stringify(priya)).not.toContain('Termination');
    // The requester needs no member list.
    hh.workspace.failNext('conversations.members', 'fetch_members_failed');
    expect(JSON.stringify(await ask(hh, SAM, `status ${djbh}`))).toContain('Termination');
  });
});

describe('/approve status while Slack cannot list the channel', () => {
  it('answers a stranger exactly as it answers a number that does not exist', async () => {
    const hh = await harness();
    const djbh = await privateRequest(hh);
    const made = `${djbh.slice(0, -2)}zz`;
    const unknown = await ask(hh, ALEX, `status ${made}`);
    for (const error of ['ratelimited', 'missing_scope', 'fetch_members_failed']) {
      hh.workspace.failNext('conversations.members', error);
      const probed = await ask(hh, ALEX, `status ${djbh}`);
      expect(withoutNumber(probed, djbh)).toBe(withoutNumber(unknown, made));
    }
    expect(unknown.text).toContain('if you expected to see one, try again in a minute');
  });

  it('asks Slack once for the members while it fails, however many strangers ask meanwhile', async () => {
    const hh = await harness();
    const djbh = await privateRequest(hh);
    const before = hh.workspace.callsOf('conversations.members').length;
    for (let i = 0; i < 4; i++) hh.workspace.failNext('conversations.members', 'ratelimited');
    for (let i = 0; i < 4; i++)
      expect((await ask(hh, ALEX, `status ${djbh}`)).text).toContain('There is no approval');
    expect(hh.workspace.callsOf('conversations.members').length - before).toBe(1);
  });
});

describe('/approve list and App Home', () => {
  it('show a stranger nothing of someone else’s approval, and its approver their own', async () => {
    const hh = await harness();
    const djbh = await privateRequest(hh);
    const alexList = await ask(hh, ALEX, 'list');
    expect(JSON.stringify(alexList)).not.toContain(djbh);
    expect(alexList.text).toContain('Waiting for you: 0');
    expect(await openHome(hh, ALEX)).not.toContain(djbh);
    // The same surfaces do show it to those it belongs to.
    expect((await ask(hh, MARIA, 'list')).text).toContain('Waiting for you: 1');
    expect(await openHome(hh, MARIA)).toContain(djbh);
    expect(JSON.stringify(await ask(hh, SAM, 'list'))).toContain(djbh);
  });
});
