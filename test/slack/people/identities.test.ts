import { describe, expect, it } from 'vitest';
import { sameLogin } from '../../../src/approvals/person.ts';
import { createIdentities } from '../../../src/slack/people/identities.ts';
import { createSlackPeople, type SlackPeople } from '../../../src/slack/people/slack-people.ts';
import { createAccountLinkStore } from '../../../src/store/account-link-store.ts';
import { createApprovalRepository } from '../../../src/store/approval-repository.ts';
import { openDatabase } from '../../../src/store/database.ts';
import { approval as fixture } from '../../helpers/store-fixtures.ts';

/** Slack people whose e-mails are these, found by them as users.lookupByEmail would. */
function peopleWith(emails: Record<string, string>): SlackPeople {
  return {
    async get(id: string) {
      return { id, email: emails[id] ?? null } as never;
    },
    cached: () => undefined,
    async findByEmail(email: string) {
      return Object.entries(emails).find(([, e]) => e === email)?.[0] ?? null;
    },
  } as unknown as SlackPeople;
}

describe('identities: one login, one Slack person', () => {
  it('does not let the account whose e-mail a login is act as that login once another account is linked to it', async () => {
    const handle = await openDatabase(':memory:');
    try {
      const links = createAccountLinkStore(handle.db, handle.dialect);
      // U_MARIA's Slack e-mail is maria@; U_ANDY proved maria@ with a session (or an admin linked him).
      const emails: Record<string, string> = {
        U_MARIA: 'maria@corp.example',
        U_ANDY: 'andy@x.example',
      };
      const people = peopleWith(emails);
      const identities = createIdentities({ people, links, linking: 'self' });
      const out = await links.link({
        slackUserId: 'U_ANDY',
        teamId: 'T1',
        login: 'maria@corp.example',
        name: 'MARIA',
        linkedAt: new Date(0),
      });
      expect(out).toEqual({ linked: true });
      expect(await identities.slackUserOf('maria@corp.example')).toBe('U_ANDY');
      expect(await identities.loginOf('U_ANDY')).toBe('maria@corp.example');
      // Everything is addressed to U_ANDY now, yet U_MARIA still *is* maria@ for status/list/Home:
      const both = [await identities.loginOf('U_MARIA'), await identities.loginOf('U_ANDY')];
      expect(both.filter((l) => l === 'maria@corp.example')).toHaveLength(1);
    } finally {
      await handle.close();
    }
  });

  it('never reaches a linked account for the login of its own e-mail, which is someone else', async () => {
    const handle = await openDatabase(':memory:');
    try {
      const links = createAccountLinkStore(handle.db, handle.dialect);
      // U_BOB's Slack e-mail is bob@ but his service login is robert@ (admin link). bob@ is
      // another person in the service, who is not on Slack.
      const emails: Record<string, string> = { U_BOB: 'bob@corp.example' };
      const people = peopleWith(emails);
      const identities = createIdentities({ people, links, linking: 'self' });
      await links.link({
        slackUserId: 'U_BOB',
        teamId: 'T1',
        login: 'robert@corp.example',
        name: 'ROBERT',
        linkedAt: new Date(0),
      });
      expect(await identities.loginOf('U_BOB')).toBe('robert@corp.example');
      // The approver bob@'s DMs, reminders, digest and escalations go to U_BOB, who is robert@:
      expect(await identities.slackUserOf('bob@corp.example')).toBeNull();
    } finally {
      await handle.close();
    }
  });
});

describe('Slack people: the e-mail cache folds logins as person.ts does', () => {
  it('keeps a look-alike login (K, the Kelvin sign) apart from kate@', async () => {
    const client = {
      users: {
        async lookupByEmail({ email }: { email: string }) {
          if (email === 'kate@corp.example') return { user: { id: 'U_KATE' } };
          throw Object.assign(new Error('users_not_found'), { data: { error: 'users_not_found' } });
        },
      },
    };
    const people = createSlackPeople(client as never);
    const kelvin = '\u212Aate@corp.example';
    expect(sameLogin(kelvin, 'kate@corp.example')).toBe(false);
    expect(await people.findByEmail('kate@corp.example')).toBe('U_KATE');
    expect(await people.findByEmail(kelvin)).toBeNull();
  });
});

describe('account links: a relink', () => {
  it("leaves the old login's approvals recording no account (Andy linked to maria@, then relinked to priya@)", async () => {
    const handle = await openDatabase(':memory:');
    try {
      const links = createAccountLinkStore(handle.db, handle.dialect);
      const repo = createApprovalRepository(handle.db, 'sqlite');
      await repo.createApproval(
        fixture('D1', { parties: { approver: { login: 'maria@corp.example', slackId: null } } }),
        new Date(0),
      );
      await links.link({
        slackUserId: 'U_ANDY',
        teamId: 'T1',
        login: 'maria@corp.example',
        name: 'MARIA',
        linkedAt: new Date(1),
      });
      expect((await repo.getApproval('D1'))?.parties.approver.slackId).toBe('U_ANDY');
      await links.link({
        slackUserId: 'U_ANDY',
        teamId: 'T1',
        login: 'priya@corp.example',
        name: 'PRIYA',
        linkedAt: new Date(2),
      });
      // As unlink does (forgetApproverAccount): the previous release addresses by this id.
      expect((await repo.getApproval('D1'))?.parties.approver.slackId).toBeNull();
    } finally {
      await handle.close();
    }
  });
});
