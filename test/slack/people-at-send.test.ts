import { describe, expect, it } from 'vitest';
import { createAccountLinkStore } from '../../src/store/account-link-store.ts';
import { createApprovalStores } from '../../src/store/approval-stores.ts';
import { openDatabase } from '../../src/store/database.ts';
import { type Harness, harnessPerTest, kindOf, waitFor } from '../helpers/harness.ts';
import { sampleApproval, seedApproval } from '../helpers/outbox-seed.ts';

// People are resolved when a message is sent: an approval names its people by their service
// login, and the Slack account a DM goes to is the one the identities give for that login at that
// moment (a link, else the Slack e-mail). Through the whole product: the app over HTTP with signed
// requests, the simulator, the Slack stand-in and a real SQLite database; the admin's links are
// written to the table `npm run accounts` writes.

const harness = harnessPerTest();
const HOUR = 3_600_000;
const SAM = 'sam.taylor@corp.example'; // his approver: Maria Lopez, whose leader is Chen Hao
const MARIA = 'maria.lopez@corp.example';
const CHEN = 'chen.hao@corp.example';
const ALEX = 'alex.kim@corp.example'; // his approver: Liu Yang, whose leader is Priya Nair
const LIU = 'liu.yang@corp.example'; // his approver: Priya Nair
const PRIYA = 'priya.nair@corp.example';
// Slack accounts whose e-mail the service does not know: Andy, whom an admin links to Maria's
// login by mistake, and Maria's own account, under her personal address.
const ANDY = 'andy@personal.example';
const MARIA_ON_SLACK = 'maria@personal.example';

/** Everything the app posted in the DM of the Slack user `userId`, from message `from` on. */
function dmsOf(hh: Harness, userId: string, from = 0) {
  return hh.workspace.messages.slice(from).filter((m) => {
    const channel = hh.workspace.channels.get(m.channel);
    return channel?.kind === 'im' && channel.members.has(userId);
  });
}

/** The harness with a clock the test moves, and an admin's links (what `npm run accounts` does). */
async function start(env: Record<string, string> = {}) {
  let offset = 0;
  const hh = await harness({
    notOnSlack: [MARIA],
    extraSlackUsers: [
      { login: 'andy', name: 'Andy Wrong', email: ANDY, locale: 'en-US' },
      { login: 'maria.home', name: 'Maria L', email: MARIA_ON_SLACK, locale: 'en-US' },
    ],
    env: {
      ACCOUNT_LINKING: 'admin',
      REMINDER_AFTER_HOURS: '1',
      REMINDER_INTERVAL_HOURS: '1',
      REMINDER_MAX: '3',
      ESCALATE_AFTER_REMINDERS: '2',
      ...env,
    },
    now: () => new Date(Date.now() + offset),
  });
  const db = await openDatabase(hh.env.DATABASE_URL);
  const links = createAccountLinkStore(db.db, db.dialect);
  return {
    hh,
    links: {
      add: (email: string, login: string) =>
        links.link({
          slackUserId: hh.user(email),
          teamId: hh.workspace.teamId,
          login,
          name: login.split('@')[0]?.toUpperCase() ?? login,
          linkedAt: new Date(),
        }),
      remove: (email: string) => links.unlink(hh.user(email)),
    },
    store: createApprovalStores(db.db, db.dialect),
    /** Moves the clock past the next reminder and runs a poll pass (and its deliveries). */
    async later(hours = 1.1) {
      offset += hours * HOUR;
      return hh.app.poll(new Date(Date.now() + offset));
    },
    close: () => db.close(),
  };
}

describe('people resolved when a message is sent', () => {
  it('sends nothing more to an account an admin unlinked, not even the digest of a private request, and reminds the account linked next', async () => {
    const { hh, links, later, close } = await start();
    try {
      const andy = hh.user(ANDY);
      const mariaOnSlack = hh.user(MARIA_ON_SLACK);
      await links.add(ANDY, MARIA);
      const hr = hh.workspace.addChannel(
        'hr',
        'private',
        new Set([hh.user(SAM), hh.workspace.botUserId]),
      );
      // Sam asks Maria (Andy, by the link) twice: once in a private channel.
      const { approval: secret } = await hh.startApproval(SAM, 'hr', 'Termination of J. Doe');
      expect(secret.approver).toBe(MARIA);
      await hh.startApproval(SAM, 'general', 'New storage node');
      expect(dmsOf(hh, andy).filter((m) => kindOf(m) === 'approver-dm')).toHaveLength(2);
      expect(hr.members.has(andy)).toBe(false);

      // The admin removes the link: Andy was the wrong person.
      await links.remove(ANDY);
      const unlinkedAt = hh.workspace.messages.length;
      const first = await later();
      expect(first.reminded).toBe(2);
      await hh.app.deliver();
      // Nothing for Andy: no reminder, no digest listing "Termination of J. Doe".
      expect(dmsOf(hh, andy, unlinkedAt)).toEqual([]);
      // And Maria, not on Slack under her login now, was not reminded either: two reminders
      // nobody got are not two unanswered, and Chen Hao is not told she did not answer.
      await later();
      await later();
      await hh.app.deliver();
      expect(dmsOf(hh, andy, unlinkedAt)).toEqual([]);
      expect(dmsOf(hh, hh.user(CHEN)).filter((m) => kindOf(m).startsWith('escalation'))).toEqual(
        [],
      );

      // The admin links Maria's own account: what waits for her reaches her there.
      await links.add(MARIA_ON_SLACK, MARIA);
      const linkedAt = hh.workspace.messages.length;
      await later();
      await hh.app.deliver();
      const toMaria = dmsOf(hh, mariaOnSlack, linkedAt);
      expect(toMaria.length).toBeGreaterThan(0);
      expect(JSON.stringify(toMaria)).toContain('Termination of J. Doe');
      expect(dmsOf(hh, andy, unlinkedAt)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('moves the reminders of a person who relinks to the account they link', async () => {
    const { hh, links, later, close } = await start();
    try {
      await links.add(ANDY, MARIA);
      await hh.startApproval(SAM, 'general', 'New storage node');
      // Relinked: the login is Maria's account's now (an admin changes the link).
      await links.remove(ANDY);
      await links.add(MARIA_ON_SLACK, MARIA);
      const relinkedAt = hh.workspace.messages.length;
      expect((await later()).reminded).toBe(1);
      await hh.app.deliver();
      const reminders = (id: string) =>
        dmsOf(hh, id, relinkedAt).filter((m) => kindOf(m).startsWith('reminder'));
      expect(reminders(hh.user(MARIA_ON_SLACK))).toHaveLength(1);
      expect(reminders(hh.user(ANDY))).toEqual([]);
    } finally {
      await close();
    }
  });

  it('takes an account for its Slack e-mail alone once ACCOUNT_LINKING is off: what waits for the login it was linked to is neither shown nor sent to it', async () => {
    const { hh, links, later, close } = await start();
    try {
      const andy = hh.user(ANDY);
      await links.add(ANDY, MARIA);
      hh.workspace.addChannel('hr', 'private', new Set([hh.user(SAM), hh.workspace.botUserId]));
      const { approval } = await hh.startApproval(SAM, 'hr', 'Termination of J. Doe');
      // Andy was Maria for the app: he was sent her DM, and status shows it to him.
      expect(dmsOf(hh, andy).map(kindOf)).toEqual(['approver-dm']);
      const ask = async (text: string) => {
        const seen = hh.workspace.ephemeral(andy).length;
        await hh.slack.command(andy, hh.channel('general'), text);
        return JSON.stringify(await waitFor(() => hh.workspace.ephemeral(andy)[seen], 5000, text));
      };
      expect(await ask(`status ${approval.djbh}`)).toContain('Termination of J. Doe');

      // Links are turned off: Andy is his Slack e-mail again, which nothing waits for.
      (hh.env as Record<string, string>).ACCOUNT_LINKING = 'off';
      await hh.restart();
      const offAt = hh.workspace.messages.length;
      expect(await ask(`status ${approval.djbh}`)).not.toContain('Termination of J. Doe');
      const list = await ask('list');
      expect(list).toContain('Waiting for you: 0');
      expect(list).not.toContain('Termination of J. Doe');
      await later();
      await hh.app.deliver();
      expect(dmsOf(hh, andy, offAt)).toEqual([]);
    } finally {
      await close();
    }
  });

  it('never tells someone an approval only escalated to them is waiting for them', async () => {
    const { hh, later, close } = await start({ ESCALATE_AFTER_REMINDERS: '1' });
    try {
      // Alex asks Liu; nobody answers, and it is escalated to Priya, Liu's leader.
      await hh.startApproval(ALEX, 'general', 'Console redesign');
      await later();
      await hh.app.deliver();
      expect((await later()).escalated).toBe(1);
      await hh.app.deliver();
      // Her list and her Home show it as escalated to her, waiting for Liu, not as hers.
      const priya = hh.user(PRIYA);
      const seen = hh.workspace.ephemeral(priya).length;
      await hh.slack.command(priya, hh.channel('general'), 'list');
      const list = JSON.stringify(
        await waitFor(() => hh.workspace.ephemeral(priya)[seen], 5000, 'the list'),
      );
      expect(list).toContain(`escalated to you: waiting for <@${hh.user(LIU)}> for 2 hours`);
      const published = hh.workspace.callsOf('views.publish').length;
      await hh.slack.event({
        type: 'app_home_opened',
        user: priya,
        channel: 'D0HOME',
        tab: 'home',
      });
      await waitFor(() => hh.workspace.callsOf('views.publish').length > published, 5000, 'Home');
      const home = JSON.stringify(hh.workspace.homes.get(priya));
      expect(home).toContain('Console redesign');
      expect(home).toContain(`escalated to you: waiting for <@${hh.user(LIU)}> for 2 hours`);
      // Liu asks Priya, who has one approval to decide (and one she was told of as Liu's leader).
      const { approval } = await hh.startApproval(LIU, 'general', 'Billing audit');
      const before = hh.workspace.messages.length;
      await later();
      await hh.app.deliver();
      const reminders = dmsOf(hh, hh.user(PRIYA), before).filter((m) =>
        kindOf(m).startsWith('reminder'),
      );
      expect(reminders).toHaveLength(1);
      // Her usual reminder of the one she decides, not "2 approvals are waiting for you".
      expect(reminders[0]?.text).not.toContain('approvals are waiting for you');
      expect(JSON.stringify(reminders[0]?.blocks)).toContain(approval.djbh);
      expect(JSON.stringify(reminders[0])).not.toContain('Console redesign');
    } finally {
      await close();
    }
  });
});

describe('/approve list', () => {
  it('finds every open request however many closed ones are newer', async () => {
    const { hh, store, close } = await start();
    try {
      const sam = hh.user(SAM);
      const general = hh.channel('general');
      const at = (minutes: number) => new Date(Date.now() - 10 * HOUR + minutes * 60_000);
      const mine = {
        teamId: 'T',
        parties: { requester: { slackId: sam, login: SAM } },
        slack: { channelId: general },
      };
      await seedApproval(
        store,
        sampleApproval('OPEN0000000a', {
          ...mine,
          request: { title: 'The old open one', createdAt: at(0) },
        }),
        { posted: { channel: general, ts: '1.000001' } },
      );
      for (let i = 0; i < 105; i++) {
        const djbh = `DONE${String(i).padStart(8, '0')}`;
        await seedApproval(
          store,
          sampleApproval(djbh, { ...mine, request: { createdAt: at(1 + i) } }),
          {
            posted: { channel: general, ts: `2.${String(i).padStart(6, '0')}` },
          },
        );
        await store.recordDecision(djbh, {
          decision: 'approved',
          decidedBy: null,
          ended: true,
          now: at(2 + i),
          nextCheckAt: at(3 + i),
        });
      }
      const seen = hh.workspace.ephemeral(sam).length;
      await hh.slack.command(sam, general, 'list');
      const answer = await waitFor(() => hh.workspace.ephemeral(sam)[seen], 5000, 'the list');
      expect(answer.text).toContain('Your open requests: 1');
      expect(JSON.stringify(answer.blocks)).toContain('The old open one');
    } finally {
      await close();
    }
  });
});
