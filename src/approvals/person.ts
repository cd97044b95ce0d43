/**
 * A person, as the app knows them: their chat account and their approval-service login, which
 * travel together. Either may be unknown (an approver typed in as a login who is not on the chat;
 * someone the service does not know). Every surface that names, compares or mentions someone goes
 * through this file, so that "is this the same person" has one answer everywhere.
 */
export interface Person {
  /** Their chat (Slack) user id; null when not on the chat or not looked up. */
  chatId: string | null;
  /** Their service login (an e-mail address); null when unknown. */
  login: string | null;
}

/**
 * The one rule for comparing logins: case-insensitively. Logins are e-mail addresses and the
 * service's own lookups ignore case, so `Maria.Lopez@corp.example` is the approver
 * `maria.lopez@corp.example` whichever way the service or a person spelled it. An empty or absent
 * login is nobody, and equal to nobody.
 */
export function sameLogin(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return false;
  return loginKey(a) === loginKey(b);
}

/**
 * The form of a login that compares (sameLogin): for sets and maps keyed by login, and what the
 * store compares (`lower(login)` on both sides of a query, which is why it does not trim). Only
 * ASCII letters fold, as SQLite's lower() folds them: JavaScript's toLowerCase also folds look-alikes
 * (U+212A KELVIN SIGN to `k`, `İ` to `i̇`) into logins the service and the store hold to be someone
 * else, and status would then show what list and Home do not.
 */
export function loginKey(login: string): string {
  return login.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** The same person: the same chat account, or the same login (sameLogin). */
export function samePerson(a: Person, b: Person): boolean {
  if (a.chatId !== null && a.chatId === b.chatId) return true;
  return sameLogin(a.login, b.login);
}

export function person(
  chatId: string | null | undefined,
  login: string | null | undefined,
): Person {
  return { chatId: chatId ?? null, login: login ?? null };
}

/**
 * Who a person is on the chat right now, declared once: the service's login is the person, and
 * their chat account is only the way to reach them today, found through the identities (their
 * link, unless ACCOUNT_LINKING=off; else their chat e-mail). Every message the app addresses to a
 * person, and every answer to who is asking, goes through this port at that moment. The chat ids
 * an approval recorded as it started are never trusted to reach anyone: a link made, changed or
 * removed since, or a change of ACCOUNT_LINKING, has moved the person.
 */
export interface Identities {
  /** The service login of a chat account, or null when neither a link nor an e-mail gives one. */
  loginOf(chatId: string): Promise<string | null>;
  /** The chat account of a service login now, or null when they are not on the chat. */
  slackUserOf(login: string): Promise<string | null>;
}
