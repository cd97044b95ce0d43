import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { Page } from '../../../approvals/approval-store.ts';
import { buildHomeView, HOME_ROWS } from '../../blocks/home-view.ts';
import { messagesFor } from '../../i18n.ts';
import type { SlackDeps } from '../../slack-deps.ts';

type Deps = Pick<
  SlackDeps,
  'people' | 'identities' | 'links' | 'store' | 'logger' | 'webUrl' | 'now'
>;
type Args = SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs;

const EMPTY: Page = { approvals: [], total: 0 };

/**
 * Publishes the Home tab: what waits for me and my requests. Publishing is idempotent, so Slack's
 * retries of this event do no harm. Permalinks never change and are cached.
 */
export function appHomeOpened(deps: Deps) {
  const permalinks = new Map<string, string>();
  return async ({ event, client }: Args): Promise<void> => {
    if (event.tab !== 'home') return;
    const person = await deps.people.get(event.user);
    const t = messagesFor(person.locale);
    const login = await deps.identities.loginOf(event.user);
    const linked = await deps.links.get(event.user);
    const waiting = login ? await deps.store.waitingFor(login, HOME_ROWS) : EMPTY;
    const mine = login ? await deps.store.requestedBy(login, HOME_ROWS) : EMPTY;
    for (const a of [...waiting.approvals, ...mine.approvals]) {
      if (permalinks.has(a.djbh) || !a.messageTs) continue;
      const link = await client.chat
        .getPermalink({ channel: a.channelId, message_ts: a.messageTs })
        .then(
          (r) => r.permalink,
          () => undefined,
        );
      if (link) permalinks.set(a.djbh, link);
    }
    const view = buildHomeView(
      {
        login,
        linked,
        waiting,
        mine,
        permalinks,
        now: deps.now(),
        ...(deps.webUrl ? { webUrl: deps.webUrl } : {}),
      },
      t,
    );
    await client.views.publish({ user_id: event.user, view });
  };
}

export function registerEvents(app: App, deps: Deps): void {
  app.event('app_home_opened', appHomeOpened(deps));
}
