import {
  type Action,
  type ApprovalParties,
  type ConversationMembership,
  decide,
  mayManageTemplates,
  mayUseTemplates,
  partiesOf,
  type TemplateManagers,
  type TemplatePlaceVerdict,
  type Verdict,
  whoMay,
} from '../../approvals/access-policy.ts';
import type { Page } from '../../approvals/approval-repository.ts';
import { mayPostRequestIn } from '../../approvals/audience.ts';
import type { TrackedApproval } from '../../approvals/tracked-approval.ts';
import { isDirectMessage } from '../ids.ts';
import type { Identities } from './identities.ts';
import type { SlackPeople } from './slack-people.ts';

/** The access policy (src/approvals/access-policy.ts) for a Slack user. */
export interface Access {
  /** Whether the Slack user `userId` may do `what` with the approval of `parties`. */
  check(what: Action, parties: ApprovalParties, userId: string): Promise<Verdict>;
  /**
   * Whether the Slack user `userId` may manage the request templates of `channelId`; `appUserId`
   * is the app's own bot user (Bolt's context.botUserId), to tell whether the app is there too.
   */
  templates(
    channelId: string,
    userId: string,
    appUserId: string | undefined,
  ): Promise<TemplatePlaceVerdict>;
  /** Who may change templates here (TEMPLATE_MANAGERS), for saying who may when someone may not. */
  readonly templateManagers: TemplateManagers;
  /** Whether the Slack user `userId` may be offered, and apply, the templates of `channelId`. */
  useTemplates(channelId: string, userId: string): Promise<Verdict>;
  /**
   * Whether a request of the Slack user `userId` may be posted in `channelId` (its members would
   * read it): the audience rule (approvals/audience.ts), as a member of it now.
   */
  postRequestIn(channelId: string, userId: string): Promise<Verdict>;
}

export function createAccess(deps: {
  identities: Pick<Identities, 'loginOf'>;
  membership: ConversationMembership;
  /** users.info's is_admin and is_owner, for the `workspace-admin` role. */
  people?: Pick<SlackPeople, 'get'>;
  /** Who may change templates (TEMPLATE_MANAGERS); the channel's members unless chosen. */
  templateManagers?: TemplateManagers;
}): Access {
  const templateManagers = deps.templateManagers ?? 'members';
  const rules = whoMay({ templateManagers });
  const { people } = deps;
  const askerOf = (userId: string) => {
    let login: Promise<string | null> | undefined;
    return {
      chatId: userId,
      // Looked up once, and only when a rule needs it.
      login: () => {
        login ??= deps.identities.loginOf(userId);
        return login;
      },
      // Slack says who administers the workspace (users.info, cached with the person).
      ...(people
        ? { isWorkspaceAdmin: async () => (await people.get(userId)).isWorkspaceAdmin }
        : {}),
    };
  };
  return {
    templateManagers,
    check(what, parties, userId) {
      return decide(what, parties, askerOf(userId), deps.membership, rules);
    },
    templates(channelId, userId, appUserId) {
      const place = {
        conversationId: channelId,
        direct: isDirectMessage(channelId),
        appChatId: appUserId,
      };
      return mayManageTemplates(place, askerOf(userId), deps.membership, rules);
    },
    useTemplates(channelId, userId) {
      return mayUseTemplates(channelId, askerOf(userId), deps.membership, rules);
    },
    postRequestIn(channelId, userId) {
      return mayPostRequestIn(channelId, askerOf(userId), deps.membership);
    },
  };
}

/**
 * The approvals of a list that `userId` may see, in order. A row whose check is unsure is left
 * out: a list is never the place to fail open.
 */
export async function visibleTo(
  access: Access,
  userId: string,
  approvals: TrackedApproval[],
): Promise<TrackedApproval[]> {
  const verdicts = await Promise.all(
    approvals.map((a) => access.check('see', partiesOf(a), userId)),
  );
  return approvals.filter((_, i) => verdicts[i] === 'allowed');
}

/** A page with only what `userId` may see; the total drops by what was left out. */
export async function visiblePage(access: Access, userId: string, page: Page): Promise<Page> {
  const approvals = await visibleTo(access, userId, page.approvals);
  return { approvals, total: page.total - (page.approvals.length - approvals.length) };
}
