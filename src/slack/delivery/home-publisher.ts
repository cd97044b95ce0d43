import type { WebClient } from '@slack/web-api';
import type { Page } from '../../approvals/approval-repository.ts';
import { inForce } from '../../approvals/delegation.ts';
import { placesOrNone } from '../../approvals/step-places.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import { logFailure } from '../../logger.ts';
import type { HomeDelegation } from '../blocks/home-delegation.ts';
import { buildHomeView, HOME_ROWS } from '../blocks/home-view.ts';
import { personRef } from '../blocks/request-message.ts';
import { messagesFor } from '../i18n.ts';
import { visiblePage } from '../people/access.ts';
import { BoundedMap } from '../people/bounded.ts';
import type { SlackDeps } from '../slack-deps.ts';

type Deps = Pick<
  SlackDeps,
  | 'people'
  | 'identities'
  | 'links'
  | 'accountLinking'
  | 'store'
  | 'logger'
  | 'webUrl'
  | 'webListUrl'
  | 'now'
  | 'access'
  | 'delegations'
> &
  Partial<Pick<SlackDeps, 'chains'>>;

const EMPTY: Page = { approvals: [], total: 0 };
const MAX_PERMALINKS = 10_000;

export interface HomePublisher {
  /** Builds a person's Home tab from the store and publishes it. */
  publish(userId: string): Promise<void>;
  /**
   * Republishes the Home tabs of people who have opened theirs since this process started, after
   * something they would see there changed. Best effort: Home is rebuilt whenever it is opened.
   */
  refresh(userIds: Array<string | null>): Promise<void>;
}

export function createHomePublisher(deps: Deps, client: WebClient): HomePublisher {
  // Permalinks never change; a Home of 40 rows would otherwise cost 40 calls each time.
  // Only the newest rows are ever shown, so the oldest links can go.
  const permalinks = new BoundedMap<string>(MAX_PERMALINKS);
  const seen = new Set<string>();

  /** The request messages' links of these approvals, each asked of Slack once. */
  async function rememberLinks(approvals: TrackedApproval[]): Promise<void> {
    for (const a of approvals) {
      if (permalinks.has(a.djbh) || !a.slack.messageTs) continue;
      const link = await client.chat
        .getPermalink({ channel: a.slack.channelId, message_ts: a.slack.messageTs })
        .then(
          (r) => r.permalink,
          () => undefined,
        );
      if (link) permalinks.set(a.djbh, link);
    }
  }

  async function publish(userId: string): Promise<void> {
    seen.add(userId);
    const viewer = await deps.people.get(userId);
    const t = messagesFor(viewer.locale);
    const login = await deps.identities.loginOf(userId);
    const linked = await deps.links.get(userId);
    // Through the access policy, like every surface that shows approvals.
    const waiting = login
      ? await visiblePage(deps.access, userId, await deps.store.waitingFor(login, HOME_ROWS))
      : EMPTY;
    const mine = login
      ? await visiblePage(deps.access, userId, await deps.store.requestedBy(login, HOME_ROWS))
      : EMPTY;
    await rememberLinks([...waiting.approvals, ...mine.approvals]);
    const places = await placesOrNone(deps.chains, [...waiting.approvals, ...mine.approvals]);
    const view = buildHomeView(
      {
        login,
        linked,
        waiting,
        mine,
        permalinks,
        places,
        linking: deps.accountLinking,
        now: deps.now(),
        ...(login ? { delegation: await delegationOf(login, waiting.total, viewer.timeZone) } : {}),
        ...(deps.webUrl ? { webUrl: deps.webUrl } : {}),
        ...(deps.webListUrl ? { webListUrl: deps.webListUrl } : {}),
      },
      t,
    );
    await client.views.publish({ user_id: userId, view });
  }

  /**
   * The person's delegate while away, named as they are on Slack now (through the identities).
   * Advice: when the store cannot say, Home shows none rather than failing.
   */
  async function delegationOf(
    login: string,
    waiting: number,
    timeZone: string | undefined,
  ): Promise<HomeDelegation> {
    const d = await deps.delegations.of(login).catch(() => undefined);
    if (!d || !inForce(d, deps.now())) return { active: null, waiting, timeZone };
    const chatId = await deps.identities.slackUserOf(d.to).catch(() => null);
    return { active: { delegate: personRef(chatId, d.to), until: d.until }, waiting, timeZone };
  }

  return {
    publish,
    async refresh(userIds) {
      for (const userId of new Set(userIds)) {
        if (!userId || !seen.has(userId)) continue;
        await publish(userId).catch((error: unknown) => {
          logFailure(deps.logger, error, { user: userId }, 'could not refresh the Home tab');
        });
      }
    },
  };
}
