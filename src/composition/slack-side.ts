import { approverListUrl } from '../approval-service/web-links.ts';
import type { Config } from '../config.ts';
import type { InFlight } from '../in-flight.ts';
import type { Logger } from '../logger.ts';
import { createHomePublisher } from '../slack/delivery/home-publisher.ts';
import { createAccess } from '../slack/people/access.ts';
import { createConversationMembership } from '../slack/people/conversation-members.ts';
import { createIdentities } from '../slack/people/identities.ts';
import { createSlackPeople } from '../slack/people/slack-people.ts';
import type { Route } from '../slack/receivers/http-receiver.ts';
import { createBoltApp, verifyBotToken } from '../slack/receivers/slack-app.ts';
import { createStepConfirmer } from '../slack/workflow/step-confirmer.ts';
import type { Stores } from './stores.ts';

/**
 * What people reach: the Bolt app (on its interactive client), who people are and may see on
 * it, the Home tab and the workflow step's confirmations, on the same client; and the scopes the
 * bot token was granted (undefined when Slack did not say), from the one check of the token.
 */
export async function createSlackSide(
  config: Config,
  deps: {
    logger: Logger;
    now: () => Date;
    stores: Pick<Stores, 'approvals' | 'links' | 'confirmations' | 'delegations' | 'chains'>;
    /** Served on PORT beside Slack's endpoint (see createAdminRoutes). */
    routes: Route[];
    inFlight: InFlight;
  },
) {
  const { logger, now } = deps;
  const slackApi = {
    botToken: config.slack.botToken ?? '',
    ...(config.slack.apiUrl ? { apiUrl: config.slack.apiUrl } : {}),
    logger,
    timeoutMs: config.slack.timeoutMs,
    slackBodies: config.logSlackBodies,
  };
  const identity = await verifyBotToken(slackApi);
  const bolt = await createBoltApp(
    {
      ...slackApi,
      ...(config.slack.signingSecret ? { signingSecret: config.slack.signingSecret } : {}),
      ...(config.mode === 'socket' && config.slack.appToken
        ? { appToken: config.slack.appToken }
        : {}),
      routes: deps.routes,
      inFlight: deps.inFlight,
    },
    identity,
  );
  const people = createSlackPeople(bolt.client);
  const links = deps.stores.links;
  const identities = createIdentities({ people, links, linking: config.accountLinking });
  const membership = createConversationMembership(bolt.client, () => now().getTime());
  const access = createAccess({
    identities,
    membership,
    people,
    templateManagers: config.templateManagers,
  });
  const listUrl = approverListUrl(config.approval);
  const webUrl = {
    ...(config.approval.webUrl ? { webUrl: config.approval.webUrl } : {}),
    ...(listUrl ? { webListUrl: listUrl } : {}),
  };
  const home = createHomePublisher(
    {
      people,
      identities,
      links,
      accountLinking: config.accountLinking,
      store: deps.stores.approvals,
      delegations: deps.stores.delegations,
      chains: deps.stores.chains,
      logger,
      now,
      access,
      ...webUrl,
    },
    bolt.client,
  );
  // Workflow steps waiting for their requester's confirmation, asked on the same client.
  const confirmer = createStepConfirmer({
    client: bolt.client,
    confirmations: deps.stores.confirmations,
    logger,
    confirmMs: config.workflow.confirmMs,
  });
  return {
    bolt,
    grantedScopes: identity.scopes,
    people,
    identities,
    access,
    membership,
    home,
    confirmer,
    webUrl,
  };
}

export type SlackSide = Awaited<ReturnType<typeof createSlackSide>>;
