/**
 * A Slack user's service login, where their Slack e-mail is not it (or Slack shows none): proved
 * by the person with a session of the service's web UI, or mapped by an admin (`npm run accounts`).
 * E-mail stays the rule for everyone else; a link is the exception, and for that person it wins.
 */
export interface LinkedAccount {
  slackUserId: string;
  teamId: string;
  login: string;
  /** The name the service gave, e.g. ALICE. */
  name: string;
  linkedAt: Date;
}

/**
 * What a link came to: made (or replaced), or refused because another Slack person holds the login.
 * One login is one person: two Slack accounts acting as one login would both decide, be reminded
 * and read its approvals.
 */
export type LinkOutcome = { linked: true } | { linked: false; takenBy: LinkedAccount };

/**
 * Slack user ↔ service login links, one to one: a Slack user has at most one login, a login at
 * most one Slack user. The session token used to prove one is never stored.
 */
export interface AccountLinks {
  /**
   * Links, replacing an earlier link of the same Slack user, unless another Slack user is linked to
   * that login (compared as `sameLogin`): then nothing changes and the outcome names them.
   * Approvals waiting for that login that were marked unreachable because nobody on Slack had it
   * are reachable again, in the same transaction: their approver gets reminders from then on.
   */
  link(account: LinkedAccount): Promise<LinkOutcome>;
  /** False when there was nothing to remove. */
  unlink(slackUserId: string): Promise<boolean>;
  get(slackUserId: string): Promise<LinkedAccount | undefined>;
  findByLogin(login: string): Promise<LinkedAccount | undefined>;
  /** Every link, by Slack user id: for the operator's list and export. */
  list(): Promise<LinkedAccount[]>;
}

/**
 * Who may link a Slack person to a service login (ACCOUNT_LINKING):
 * - `self`: the person, by pasting a session token of the service's web UI (`/approve link`), and
 *   admins, with `npm run accounts`;
 * - `admin`: admins only: no session token ever passes through Slack, which security teams may
 *   require;
 * - `off`: nobody: a person's Slack e-mail is their login, and links made earlier are not used.
 */
export type AccountLinking = 'self' | 'admin' | 'off';

/** What each choice allows, declared once: the command, the form and the identities read it. */
export const LINKING: Readonly<
  Record<AccountLinking, { selfService: boolean; byAdmins: boolean; linksUsed: boolean }>
> = {
  self: { selfService: true, byAdmins: true, linksUsed: true },
  admin: { selfService: false, byAdmins: true, linksUsed: true },
  off: { selfService: false, byAdmins: false, linksUsed: false },
};

/** A service login as the service accepts one (its `check format`). */
export const SERVICE_LOGIN = /^[a-zA-Z0-9.\-_@]+$/;

/** The name the service gives a login (its userinfo's `name`): the local part in upper case. */
export function serviceNameOf(login: string): string {
  return (login.split('@')[0] ?? login).toUpperCase();
}
