import type { Announcer } from '../../approvals/announcer.ts';
import { createDeliveryKit, type SlackAnnouncerOptions } from './delivery-kit.ts';
import { HANDLERS } from './handlers/index.ts';
import { createRecoverySearch } from './recovery-search.ts';
import { asAnnounceError, call, classOf } from './slack-call.ts';

export type { SlackAnnouncerOptions } from './delivery-kit.ts';

// What changes what people see on their Home tab: a new request, or a change of state.
const CHANGES_HOME = new Set(['request', 'parent-update', 'handed-over']);

/**
 * The domain's Announcer on Slack: each kind of announcement delivered by its own handler
 * (handlers/), every post through the one poster (poster.ts), each tagged with its id in message
 * metadata so that a later attempt can find it (recovery-search.ts).
 */
export function createSlackAnnouncer(options: SlackAnnouncerOptions): Announcer {
  const kit = createDeliveryKit(options);
  return {
    async deliver(a, approval, attempt) {
      try {
        return await HANDLERS[a.kind](a, approval, attempt, kit);
      } catch (error) {
        throw asAnnounceError(error);
      }
    },
    // Without the history scopes there is nothing to search with: an unknown outcome is posted again.
    findDelivered:
      options.searchesForEarlierPosts === false
        ? async () => undefined
        : createRecoverySearch({ client: options.client, slackUserOf: kit.readers.slackUserOf }),
    async checkCredentials() {
      try {
        await call('auth.test', () => options.client.auth.test());
        return 'ok';
      } catch (error) {
        return classOf(error) === 'pause' ? 'refused' : 'unknown';
      }
    },
    async afterDelivered(a, approval) {
      // Without Home tabs nobody is looked up: this runs beside the next delivery, not in it.
      const home = options.home;
      if (!home || !CHANGES_HOME.has(a.kind)) return;
      // The Home of whoever is each of its people now.
      const logins = [
        approval.parties.requester.login,
        approval.parties.approver.login,
        // Handed to someone else: it leaves the Home of the one who had it.
        approval.parties.formerApprovers.at(-1)?.login ?? null,
      ];
      const found = await Promise.all(
        logins.map((login) =>
          login ? options.identities.slackUserOf(login).catch(() => null) : null,
        ),
      );
      await home.refresh(found);
    },
  };
}
