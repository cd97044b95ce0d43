import { type AccountLinking, type AccountLinks, LINKING } from '../../approvals/account-links.ts';
import { sameLogin } from '../../approvals/person.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import type { SlackPeople } from './slack-people.ts';

/**
 * Who is who between Slack and the approval service. A person's Slack e-mail is their login,
 * unless they were linked to another (`/approve link`, or an admin's `npm run accounts`): then the
 * link wins everywhere. With ACCOUNT_LINKING=off links are not used at all.
 */
export interface Identities {
  /** The service login of a Slack user, or null when neither a link nor an e-mail gives one. */
  loginOf(slackUserId: string): Promise<string | null>;
  /** The Slack user of a service login, or null when they are not on Slack. */
  slackUserOf(login: string): Promise<string | null>;
}

/**
 * The Slack user an approval already records for `login`: its approver's, when `login` is the
 * approver's login; null when it takes a lookup (Identities.slackUserOf) to know.
 */
export function recordedSlackUser(
  approval: Pick<TrackedApproval, 'approverLogin' | 'approverSlackId'>,
  login: string,
): string | null {
  return sameLogin(login, approval.approverLogin) ? approval.approverSlackId : null;
}

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
      return (await deps.people.get(slackUserId)).email;
    },
    async slackUserOf(login) {
      const linked = linksUsed ? await deps.links.findByLogin(login) : undefined;
      if (linked) return linked.slackUserId;
      return deps.people.findByEmail(login);
    },
  };
}
