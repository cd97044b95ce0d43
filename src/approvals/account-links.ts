/** A Slack user who proved, with a session of the service's web UI, which service login is theirs. */
export interface LinkedAccount {
  slackUserId: string;
  teamId: string;
  login: string;
  /** The name the service gave, e.g. ALICE. */
  name: string;
  linkedAt: Date;
}

/** Slack user ↔ service login links. The session token used to prove one is never stored. */
export interface AccountLinks {
  /**
   * Links, replacing an earlier link of the same Slack user. Approvals waiting for that login that
   * were marked unreachable because nobody on Slack had it are reachable again, in the same
   * transaction: their approver gets reminders from then on.
   */
  link(account: LinkedAccount): Promise<void>;
  /** False when there was nothing to remove. */
  unlink(slackUserId: string): Promise<boolean>;
  get(slackUserId: string): Promise<LinkedAccount | undefined>;
  findByLogin(login: string): Promise<LinkedAccount | undefined>;
}
