import { type AccountLinking, type AccountLinks, LINKING } from '../../approvals/account-links.ts';
import type { Identities } from '../../approvals/person.ts';
import type { SlackPeople } from './slack-people.ts';

export type { Identities } from '../../approvals/person.ts';

/**
 * The identities port (approvals/person.ts) on Slack: the one adapter. A person's Slack e-mail is
 * their login, unless they were linked to another (`/approve link`, or an admin's
 * `npm run accounts`): then the link wins everywhere. With ACCOUNT_LINKING=off links are not used
 * at all. Links are read from the database each time, so a link made, changed or removed counts
 * for the next message; e-mails are Slack's, cached for a while (slack-people.ts).
 */
export function createIdentities(deps: {
  people: SlackPeople;
  links: AccountLinks;
  /** ACCOUNT_LINKING; `self` unless chosen. */
  linking?: AccountLinking;
}): Identities {
  const { linksUsed } = LINKING[deps.linking ?? 'self'];
  return {
    async loginOf(slackUserId) {
      const linked = linksUsed ? await deps.links.get(slackUserId) : undefined;
      if (linked) return linked.login;
      const email = (await deps.people.get(slackUserId)).email;
      // One login, one person: a login linked to another account is theirs, not this e-mail's.
      if (email && linksUsed && (await deps.links.findByLogin(email))) return null;
      return email;
    },
    async slackUserOf(login) {
      const linked = linksUsed ? await deps.links.findByLogin(login) : undefined;
      if (linked) return linked.slackUserId;
      const byEmail = await deps.people.findByEmail(login);
      // That account is linked to another login: it is that person, not this login's.
      if (byEmail && linksUsed && (await deps.links.get(byEmail))) return null;
      return byEmail;
    },
  };
}
