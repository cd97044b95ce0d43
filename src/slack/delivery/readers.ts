import { AnnounceError, type AttemptClock } from '../../approvals/announcer.ts';
import type { Person } from '../../approvals/person.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import type { Identities } from '../people/identities.ts';
import type { SlackPeople } from '../people/slack-people.ts';
import type { Reader } from './poster.ts';
import { call, classOf } from './slack-call.ts';

/*
 * Who an announcement is for, looked up as it is delivered: an approval names its people by
 * login, and their Slack account is whoever the identities say it is now (person.ts), never the
 * account the approval recorded as it started.
 */

export interface Readers {
  /** The Slack user of a login of this approval (its approver's unless named) now; null: not on Slack. */
  slackUserOf(
    attempt: AttemptClock,
    approval: TrackedApproval,
    login?: string,
  ): Promise<string | null>;
  /**
   * The person behind a login of this approval (the approver's when none is given), with their
   * Slack account when one is found; a lookup that fails names them by login, unless the token
   * itself is refused.
   */
  personOf(
    attempt: AttemptClock,
    approval: TrackedApproval,
    login?: string | null,
  ): Promise<Person>;
  /**
   * The requester as they can be reached now. Not on Slack any more under their login (unlinked,
   * ACCOUNT_LINKING changed): nobody may be sent their DM in their place, so nothing is posted.
   */
  requesterOf(attempt: AttemptClock, approval: TrackedApproval): Promise<Reader>;
  /**
   * A person's name for text that names them without notifying them (a mention would): their
   * Slack name, or their login when they are not on Slack or Slack no longer knows them.
   */
  nameOf(attempt: AttemptClock, approval: TrackedApproval, login: string): Promise<string>;
  /** A Slack user's time zone, as Slack says it (cached when it can); undefined when it cannot say. */
  timeZoneOf(chatId: string): Promise<string | undefined>;
  /** The Slack name of `chatId`; `login` when Slack no longer knows them. Slack being down is retried. */
  plainName(attempt: AttemptClock, chatId: string, login: string): Promise<string>;
  /**
   * Whether the account the approval recorded for its approver is deactivated: Slack's lookup by
   * e-mail no longer finds a deactivated account, and the requester is told "deactivated" rather
   * than "not on Slack". Only for those words: nothing is ever addressed to a recorded account.
   */
  recordedAccountDeactivated(attempt: AttemptClock, approval: TrackedApproval): Promise<boolean>;
}

export function createReaders(deps: { identities: Identities; people: SlackPeople }): Readers {
  const { identities, people } = deps;

  async function slackUserOf(
    attempt: AttemptClock,
    approval: TrackedApproval,
    login = approval.parties.approver.login,
  ): Promise<string | null> {
    attempt.check();
    return call('users.lookupByEmail', () => identities.slackUserOf(login));
  }

  async function plainName(attempt: AttemptClock, chatId: string, login: string): Promise<string> {
    attempt.check();
    try {
      return (await call('users.info', () => people.get(chatId))).name;
    } catch (error) {
      if (classOf(error) !== 'fallback' && classOf(error) !== 'done') throw error;
      return login;
    }
  }

  return {
    slackUserOf,
    plainName,

    async timeZoneOf(chatId) {
      return (
        people.cached(chatId)?.timeZone ??
        (await people.get(chatId).catch(() => undefined))?.timeZone
      );
    },

    async personOf(attempt, approval, login = approval.parties.approver.login) {
      const wanted = login ?? approval.parties.approver.login;
      const chatId = await slackUserOf(attempt, approval, wanted).catch((error) => {
        if (classOf(error) === 'pause') throw error;
        return null;
      });
      return { chatId, login: wanted };
    },

    async requesterOf(attempt, approval) {
      const chatId = await slackUserOf(attempt, approval, approval.parties.requester.login);
      if (!chatId)
        throw new AnnounceError(`the requester of ${approval.djbh} is not on Slack now`, {
          retryable: false,
        });
      return { chatId, login: approval.parties.requester.login };
    },

    async nameOf(attempt, approval, login) {
      const chatId = await slackUserOf(attempt, approval, login);
      return chatId ? plainName(attempt, chatId, login) : login;
    },

    async recordedAccountDeactivated(attempt, approval) {
      const recorded = approval.parties.approver.slackId;
      if (!recorded) return false;
      attempt.check();
      const account = await call('users.info', () => people.get(recorded)).catch((error) => {
        if (classOf(error) === 'pause') throw error;
        return undefined;
      });
      return account?.presence.deactivated === true;
    },
  };
}
