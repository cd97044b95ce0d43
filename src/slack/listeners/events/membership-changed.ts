import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { CachedMembership } from '../../people/conversation-members.ts';

type Joined = SlackEventMiddlewareArgs<'member_joined_channel'> & AllMiddlewareArgs;
type Left = SlackEventMiddlewareArgs<'member_left_channel'> & AllMiddlewareArgs;

/**
 * Someone joined or left a channel the app is in (or the app itself was invited or removed):
 * the member list kept for it is stale, so the next question asks Slack again. Without this an
 * `/invite @Approvals` would be answered "the app is not in this channel" until the list expired.
 * Any member counts, not only the app: a person just invited may use the channel's templates at
 * once too. Forgetting twice (Slack's retries) does no harm.
 */
export function membershipChanged(membership: Pick<CachedMembership, 'forget'>) {
  return async ({ event }: Joined | Left): Promise<void> => {
    if (typeof event.channel === 'string') membership.forget(event.channel);
  };
}

export function registerMembershipEvents(
  app: App,
  deps: { membership: Pick<CachedMembership, 'forget'> },
): void {
  app.event('member_joined_channel', membershipChanged(deps.membership));
  app.event('member_left_channel', membershipChanged(deps.membership));
}
