import { type WebAPICallResult, WebClient } from '@slack/web-api';
import { approverListUrl } from '../approval-service/web-links.ts';
import { createAnnouncementDispatcher } from '../approvals/announcement-dispatcher.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import { announcementId } from '../approvals/tracked-approval.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { HomePublisher } from '../slack/delivery/home-publisher.ts';
import { createSlackAnnouncer } from '../slack/delivery/slack-announcer.ts';
import { createConversationMembership } from '../slack/people/conversation-members.ts';
import { createIdentities } from '../slack/people/identities.ts';
import { createSlackPeople } from '../slack/people/slack-people.ts';
import { slackClientOptions } from '../slack/receivers/slack-app.ts';
import type { Stores } from './stores.ts';

// An idle dispatcher looks for work it was not told about (retries falling due, other replicas).
const DELIVERY_IDLE_MS = 1000;
// A busy lane is claimed up to this long before its pace allows the next post (and never more
// than half its interval), so the claim's database round trips do not widen the gap between
// posts (measured in bench/delivery-bench.ts).
const LANE_LOOKAHEAD_MS = 250;

/**
 * The outbox's side: a Slack client of its own (so a throttled background never slows an
 * interaction), the announcer on it, and the dispatcher that delivers in the background. The
 * people and identities found with that client serve the poll pass's lookups too.
 */
export function createDelivery(
  config: Config,
  deps: {
    logger: Logger;
    now: () => Date;
    stores: Pick<Stores, 'approvals' | 'links' | 'reminderPosts' | 'chains'>;
    service: ApprovalService;
    metrics: Metrics;
    home: HomePublisher;
    /** False without the history scopes: an unknown outcome is posted again, not searched for. */
    searchesForEarlierPosts: boolean;
  },
) {
  const { logger, metrics, service } = deps;
  const { approvals: store, links } = deps.stores;
  const background = new (meteredClient(metrics))(
    config.slack.botToken ?? '',
    slackClientOptions('background', {
      ...(config.slack.apiUrl ? { apiUrl: config.slack.apiUrl } : {}),
      logger,
      timeoutMs: config.slack.timeoutMs,
      slackBodies: config.logSlackBodies,
    }),
  );
  const people = createSlackPeople(background);
  const announcer = createSlackAnnouncer({
    client: background,
    people,
    identities: createIdentities({ people, links, linking: config.accountLinking }),
    membership: createConversationMembership(background, () => deps.now().getTime()),
    home: deps.home,
    ...(config.approval.webUrl ? { webUrl: config.approval.webUrl } : {}),
    ...(approverListUrl(config.approval) ? { webListUrl: approverListUrl(config.approval) } : {}),
    channelLanguage: config.language,
    giveUpAfterDays: Math.round(config.poll.giveUpAfterMs / 86_400_000),
    sentDm: (djbh, term) => store.sentPost(announcementId(djbh, 'approver-dm', undefined, term)),
    sentPost: (id) => store.sentPost(id),
    chainOf: (djbh) => deps.stores.chains.ofApproval(djbh),
    searchesForEarlierPosts: deps.searchesForEarlierPosts,
    ...(config.workingHours ? { workingHours: config.workingHours } : {}),
    digest: {
      waitingFor: (login, limit) => store.waitingFor(login, limit),
      lastReminderPost: (login) => deps.stores.reminderPosts.lastReminderPost(login),
      lastEscalationPost: (login) => deps.stores.reminderPosts.lastEscalationPost(login),
      escalationMayBePosted: (login, a) =>
        deps.stores.reminderPosts.escalationMayBePosted(login, a),
      reminderMayBePosted: (login, a) => deps.stores.reminderPosts.reminderMayBePosted(login, a),
    },
    logger,
  });
  const dispatcher = createAnnouncementDispatcher(
    {
      store,
      announcer,
      logger,
      now: deps.now,
      stillPending: async (approval) =>
        (await service.getStatus(approval.djbh)).decision === 'pending',
      onOutcome: (outcome, kind, ms) => metrics.delivery(kind, outcome, ms),
    },
    {
      leaseMs: config.delivery.leaseMs,
      callTimeoutMs: config.slack.timeoutMs,
      retryForMs: config.delivery.retryForMs,
      laneIntervalMs: config.delivery.channelIntervalMs,
      retryAfterMaxMs: config.delivery.retryAfterMaxMs,
      // Waiting for a late commit helps only a search for it; without one, it is delay for nothing.
      commitHorizonMs: deps.searchesForEarlierPosts ? config.delivery.commitHorizonMs : 0,
      concurrency: config.delivery.concurrency,
      idleMs: DELIVERY_IDLE_MS,
      laneLookaheadMs: Math.min(LANE_LOOKAHEAD_MS, config.delivery.channelIntervalMs / 2),
    },
  );
  // Found with the outbox's own Slack client, so the lookups never slow an interaction down.
  return {
    dispatcher,
    people,
    identities: createIdentities({ people, links, linking: config.accountLinking }),
  };
}

/** A WebClient that counts its failed calls by method and code. */
function meteredClient(metrics: Metrics) {
  return class MeteredWebClient extends WebClient {
    override async apiCall(
      method: string,
      options?: Record<string, unknown>,
    ): Promise<WebAPICallResult> {
      try {
        return await super.apiCall(method, options);
      } catch (error) {
        const e = error as { data?: { error?: string }; code?: string; statusCode?: number };
        metrics.slackError(
          method,
          e.data?.error ?? (e.statusCode ? `http_${e.statusCode}` : (e.code ?? 'unknown')),
        );
        throw error;
      }
    }
  };
}
