import type { AllMiddlewareArgs, App, SlackEventMiddlewareArgs } from '@slack/bolt';
import type { HomePublisher } from '../../delivery/home-publisher.ts';

type Args = SlackEventMiddlewareArgs<'app_home_opened'> & AllMiddlewareArgs;

/**
 * Publishes the Home tab when someone opens it. Publishing is idempotent, so Slack's retries of
 * this event do no harm.
 */
export function appHomeOpened(home: HomePublisher) {
  return async ({ event }: Args): Promise<void> => {
    if (event.tab !== 'home') return;
    await home.publish(event.user);
  };
}

export function registerEvents(app: App, deps: { home: HomePublisher }): void {
  app.event('app_home_opened', appHomeOpened(deps.home));
}
