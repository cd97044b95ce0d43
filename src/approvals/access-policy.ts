import { type Person, sameLogin } from './person.ts';
import type { TrackedApproval } from './tracked-approval.ts';

/**
 * Who may see an approval and who may act on it, declared once. Every surface that shows an
 * approval (a status answer, a list, App Home) and every button that changes something asks
 * here; adapters only supply the facts (who is asking, who is in a conversation).
 */

/**
 * The part a person plays toward an approval (or a channel's templates); `workspace-admin` is an
 * admin or owner of the whole workspace, whatever they play toward the approval.
 */
export type Role =
  | 'requester'
  | 'approver'
  | 'former-approver'
  | 'escalated-to'
  | 'conversation-member'
  | 'workspace-admin';

/** What may be done, each allowed to the roles WHO_MAY lists for it. */
export type Action =
  | 'see'
  | 'confirm-start'
  | 'request-again'
  | 'post-request-in'
  | 'manage-templates'
  | 'use-templates'
  | 'see-reports';

/**
 * Who may do what: a table like WHO_MAY, as a deployment's settings choose it (see whoMay). Each
 * action lists what allows it: a role, or several roles held together (all of them at once).
 */
export type AccessRules = Readonly<Record<Action, readonly (Role | readonly Role[])[]>>;

/** Who may change a channel's request templates, as TEMPLATE_MANAGERS names the choice. */
export type TemplateManagers = 'members' | 'admins';

/** The roles each TEMPLATE_MANAGERS choice stands for. */
export const TEMPLATE_MANAGER_ROLES: Readonly<
  Record<TemplateManagers, readonly (Role | readonly Role[])[]>
> = {
  members: ['conversation-member'],
  // Admins among the members: narrowing the members' right, never replacing it (an admin who
  // left a private channel must not read or reroute its templates).
  admins: [['workspace-admin', 'conversation-member']],
};

/** What a person may want to do with an approval, and which parts allow it. */
export const WHO_MAY: AccessRules = {
  // The requester and the approver, and whoever can read the message it was posted in: the
  // channel's members, or, for a request only ever posted in a DM, nobody else. And the leader it
  // was escalated to: the escalation DM asks them to act on it, so they must be able to open it
  // (status, list, Home) wherever it was posted; a private channel's request included. And whoever
  // had it before the service gave it to its approver now (handover.ts): they were sent its title
  // and note in their DM, so they may still open it with status; it no longer waits for them, so
  // their list and Home do not show it.
  see: ['requester', 'approver', 'former-approver', 'escalated-to', 'conversation-member'],
  // Starting an approval in someone's name: that person alone (see step-confirmation.ts).
  'confirm-start': ['requester'],
  // "Request again" starts a new approval in the old one's requester's name: theirs alone.
  'request-again': ['requester'],
  // Posting a request in a conversation makes its members its readers (see): only someone who is
  // a member now may, so "Request again" by someone who left a private channel goes to their DM.
  'post-request-in': ['conversation-member'],
  // A channel's request templates (request-templates.ts): whoever is in that channel, as its
  // parties say (see channelParties); templates belong to the channel, not to a person. A
  // workspace may keep this to its admins and owners instead (TEMPLATE_MANAGERS, see whoMay).
  'manage-templates': TEMPLATE_MANAGER_ROLES.members,
  // Being offered a channel's templates in the request form, and applying one: the same members.
  // A private channel's templates say what its members ask for; someone who left (the form can
  // still be opened on it, e.g. by "Request again") is not shown them.
  'use-templates': ['conversation-member'],
  // Reports (approval-report.ts: `/approve report`) count every approval of the workspace and
  // name its approvers and their turnaround: the workspace's admins and owners alone.
  'see-reports': ['workspace-admin'],
};

/**
 * The rules with a deployment's choices applied: who may change a channel's templates is its
 * members (the default: templates belong to the channel), or only the workspace's admins and
 * owners, for a company that wants a default approver such as "Purchase"'s kept out of anyone's
 * reach. Each choice is a set of roles, so the adapters stay the same whichever is chosen.
 */
export function whoMay(choices: { templateManagers?: TemplateManagers } = {}): AccessRules {
  return {
    ...WHO_MAY,
    'manage-templates': TEMPLATE_MANAGER_ROLES[choices.templateManagers ?? 'members'],
  };
}

/** The facts about an approval the rules read. Null where the approval has no such party yet. */
export interface ApprovalParties {
  requesterChatId: string | null;
  requesterLogin: string | null;
  approverChatId: string | null;
  approverLogin: string | null;
  /**
   * The approver the service names now, when it differs from the recorded one (the approval was
   * given to someone else): they are its approver too.
   */
  currentApproverLogin?: string | null;
  /** Who had it before its approver now (handover.ts), when it was handed over. */
  formerApprovers?: readonly Person[];
  /** The leader the approval was escalated to (escalation.ts), when it was. */
  escalatedTo?: Person | null;
  /** The conversation its request message was posted in; null until it is posted. */
  postedIn: string | null;
}

/** The person asking: their chat id, and their service login looked up only when needed. */
export interface Asker {
  chatId: string;
  /** Rejects when the chat cannot say who they are right now. */
  login(): Promise<string | null>;
  /**
   * Whether they are an admin or owner of the workspace, looked up only when a rule needs it;
   * rejects when the chat cannot say now. Absent: nobody is.
   */
  isWorkspaceAdmin?(): Promise<boolean>;
}

/** Who is in a conversation, as the chat knows it. */
export interface ConversationMembership {
  /**
   * Whether `chatId` is a member of `conversationId`. Rejects when the chat cannot answer now
   * (down, rate-limited); resolves false when it answered that they are not (or that the
   * conversation is gone).
   */
  isMember(conversationId: string, chatId: string): Promise<boolean>;
}

/** `unsure`: a rule that might allow it could not be checked; treat as not allowed, and say so. */
export type Verdict = 'allowed' | 'denied' | 'unsure';

/**
 * The parties of an approval the app started and follows; `currentApprover` is the approver the
 * service names now, when it was asked (it may have given the approval to someone else). Its
 * people are their logins alone: the chat accounts it recorded as it started are who they were
 * then, and a link changed or removed since must not let the old account pass for them (person.ts,
 * Identities). Who asks is compared by the login the identities give them now.
 */
export function partiesOf(approval: TrackedApproval, currentApprover?: string): ApprovalParties {
  return {
    requesterChatId: null,
    requesterLogin: approval.parties.requester.login,
    approverChatId: null,
    approverLogin: approval.parties.approver.login,
    ...(currentApprover && !sameLogin(currentApprover, approval.parties.approver.login)
      ? { currentApproverLogin: currentApprover }
      : {}),
    formerApprovers: approval.parties.formerApprovers.map((p) => byLogin(p)),
    escalatedTo: approval.followUp.escalatedTo ? byLogin(approval.followUp.escalatedTo) : null,
    postedIn: approval.slack.messageTs ? approval.slack.channelId : null,
  };
}

/** A recorded person by their login only (see partiesOf); by chat id only when no login is known. */
function byLogin(p: { chatId: string | null; login: string | null }): Person {
  return p.login ? { chatId: null, login: p.login } : { chatId: p.chatId, login: null };
}

/**
 * The parties of an approval the app did not start, known only from the service's status: its
 * approver (when the service names one). Its requester is not known, nor where it was posted.
 */
export function partiesFromService(approverLogin: string | undefined): ApprovalParties {
  return {
    requesterChatId: null,
    requesterLogin: null,
    approverChatId: null,
    approverLogin: approverLogin ?? null,
    postedIn: null,
  };
}

/**
 * The parties of something that belongs to a conversation rather than to an approval (its request
 * templates): nobody is its requester or approver; its readers are the conversation's members.
 */
export function channelParties(conversationId: string): ApprovalParties {
  return {
    requesterChatId: null,
    requesterLogin: null,
    approverChatId: null,
    approverLogin: null,
    postedIn: conversationId,
  };
}

/**
 * The parties of what belongs to the whole workspace rather than to an approval or a channel (its
 * reports): nobody plays a part toward it; only roles of the workspace (its admins) can allow it.
 */
export function workspaceParties(): ApprovalParties {
  return {
    requesterChatId: null,
    requesterLogin: null,
    approverChatId: null,
    approverLogin: null,
    postedIn: null,
  };
}

/** Why templates cannot be managed (or used) somewhere, or that they can. */
export type TemplatePlaceVerdict = Verdict | 'not-a-channel' | 'app-not-in-channel';

/**
 * Whether `asker` may manage the request templates of a conversation: only in a channel (a DM
 * has nobody to share them with), only where the app is too (it could not post the requests
 * there), and only as one of its members (WHO_MAY['manage-templates']). Never throws.
 */
export async function mayManageTemplates(
  place: { conversationId: string; direct: boolean; appChatId: string | undefined },
  asker: Asker,
  membership: ConversationMembership,
  rules: AccessRules = WHO_MAY,
): Promise<TemplatePlaceVerdict> {
  if (place.direct) return 'not-a-channel';
  if (place.appChatId) {
    const appIn = await membership
      .isMember(place.conversationId, place.appChatId)
      .catch(() => undefined);
    if (appIn === undefined) return 'unsure';
    if (!appIn) return 'app-not-in-channel';
  }
  return decide('manage-templates', channelParties(place.conversationId), asker, membership, rules);
}

/**
 * Whether `asker` may be offered, and apply, the request templates of a channel
 * (WHO_MAY['use-templates']); `unsure` means none are offered. Never throws.
 */
export function mayUseTemplates(
  conversationId: string,
  asker: Asker,
  membership: ConversationMembership,
  rules: AccessRules = WHO_MAY,
): Promise<Verdict> {
  return decide('use-templates', channelParties(conversationId), asker, membership, rules);
}

/**
 * Whether `asker` may do `what` with an approval: allowed as soon as one of the roles `WHO_MAY`
 * lists holds (cheapest checks first, the conversation's members last); `unsure` when none held
 * and one could not be checked. Never throws.
 */
export async function decide(
  what: Action,
  parties: ApprovalParties,
  asker: Asker,
  membership: ConversationMembership,
  rules: AccessRules = WHO_MAY,
): Promise<Verdict> {
  let unsure = false;
  for (const entry of rules[what]) {
    const holds = await playsAll(
      typeof entry === 'string' ? [entry] : entry,
      parties,
      asker,
      membership,
    );
    if (holds === true) return 'allowed';
    if (holds === undefined) unsure = true;
  }
  return unsure ? 'unsure' : 'denied';
}

/** Whether the asker plays every one of `roles`; undefined when one could not be checked. */
async function playsAll(
  roles: readonly Role[],
  parties: ApprovalParties,
  asker: Asker,
  membership: ConversationMembership,
): Promise<boolean | undefined> {
  let unsure = false;
  for (const role of roles) {
    const holds = await plays(role, parties, asker, membership).catch(() => undefined);
    if (holds === false) return false;
    if (holds === undefined) unsure = true;
  }
  return unsure ? undefined : true;
}

async function plays(
  role: Role,
  parties: ApprovalParties,
  asker: Asker,
  membership: ConversationMembership,
): Promise<boolean> {
  switch (role) {
    case 'requester':
      return is(asker, parties.requesterChatId, parties.requesterLogin);
    case 'approver':
      return (
        (await is(asker, parties.approverChatId, parties.approverLogin)) ||
        (await is(asker, null, parties.currentApproverLogin ?? null))
      );
    case 'former-approver':
      for (const p of parties.formerApprovers ?? [])
        if (await is(asker, p.chatId, p.login)) return true;
      return false;
    case 'escalated-to': {
      const to = parties.escalatedTo;
      return Boolean(to) && is(asker, to?.chatId ?? null, to?.login ?? null);
    }
    case 'conversation-member':
      return parties.postedIn !== null && membership.isMember(parties.postedIn, asker.chatId);
    case 'workspace-admin':
      return asker.isWorkspaceAdmin ? asker.isWorkspaceAdmin() : false;
  }
}

/**
 * The same person by chat id, or by service login (the approver of an approval may not have been
 * on Slack when it started). Logins compare as everywhere else (person.ts: case-insensitively).
 */
async function is(asker: Asker, chatId: string | null, login: string | null): Promise<boolean> {
  if (chatId !== null && chatId === asker.chatId) return true;
  if (!login) return false;
  const own = await asker.login();
  return sameLogin(own, login);
}
