/**
 * One person's data on request (the EU's right of access and erasure): what the app holds about
 * someone, found by their Slack member ID or their service login, and what erasing them does. The
 * rules are declared here; the store executes them table by table without knowing why.
 *
 * Erasing keeps the audit trail without the person: an approval they asked for, decided, had, or
 * were escalated to stays (its number, channel, template, times, decision and counts: what a
 * report needs), with them replaced by one pseudonym made for this erase (so their approvals still
 * count together in a summary, yet nothing links the pseudonym back: no mapping is kept), and
 * the title and note of the approvals they asked for blanked (their words). Their account link
 * and workflow confirmations are deleted; templates that name them keep working without them.
 * Approvals still open are left as they are (the service still needs their people to decide
 * them, and the app to follow them): erase says which, and is run again once they ended.
 */

import { loginKey, type Person } from './person.ts';

/** Who is asked for: every Slack member ID and service login known to be theirs. */
export interface PersonKeys {
  slackIds: readonly string[];
  logins: readonly string[];
}

/** A Slack member ID (U… in a workspace, W… in an Enterprise Grid organization). */
const MEMBER_ID = /^[UW][A-Z0-9]{2,}$/;

/** What was typed (a Slack member ID or a login) as the keys to look for first. */
export function keysOf(who: string): PersonKeys {
  const text = who.trim();
  return MEMBER_ID.test(text) ? { slackIds: [text], logins: [] } : { slackIds: [], logins: [text] };
}

/** Whether a Slack id or login is this person's (logins compared as everywhere: person.ts). */
export function isTheirs(keys: PersonKeys, value: string | null | undefined): boolean {
  if (!value) return false;
  return keys.slackIds.includes(value) || keys.logins.some((l) => loginKey(l) === loginKey(value));
}

/**
 * The DM lanes (conversation.ts) that are this person's: their DM's, and its edits' (a request
 * asked in their DM is edited there, on `edit:dm:…`, which names them as much).
 */
export function lanesOf(keys: PersonKeys): string[] {
  const dms = [
    ...keys.logins.map((l) => `dm:login:${loginKey(l)}`),
    ...keys.slackIds.map((id) => `dm:${id}`),
  ];
  return [...dms, ...dms.map((lane) => `edit:${lane}`)];
}

/** What one of their lanes becomes once they are erased: the same kind of lane, the pseudonym's. */
export const erasedLane = (lane: string, pseudonym: string): string =>
  lane.startsWith('edit:') ? `edit:dm:${pseudonym}` : `dm:${pseudonym}`;

/** What stands for an erased person from now on: `erased-<token>`, the token random per erase. */
export const pseudonymOf = (token: string): string => `erased-${token}`;

/** Who had an approval before, with the erased person replaced by the pseudonym. */
export function withoutThem(
  former: readonly Person[],
  keys: PersonKeys,
  pseudonym: string,
): Person[] {
  return former.map((p) =>
    isTheirs(keys, p.login) || isTheirs(keys, p.chatId) ? { login: pseudonym, chatId: null } : p,
  );
}

/** Everything held about one person, section by section (each a list of rows as stored). */
export type PersonalExport = Record<string, unknown[]>;

/** What an erase changed, per section, and what it left (open approvals, lanes in use). */
export interface EraseOutcome {
  changed: Record<string, number>;
  /** Approvals still open that name them: left as they are. */
  openApprovals: string[];
  /** Delivery lanes of theirs a replica is using now: left, gone at the next run. */
  busyLanes: number;
}

/**
 * One kind of data the app holds about people. The store's sections are the tables it has; a
 * feature adding a table of people (delegations, for one) adds its own section beside them, so
 * export and erase cover it without changing here.
 */
export interface PersonalDataSection {
  name: string;
  find(keys: PersonKeys): Promise<unknown[]>;
  erase(keys: PersonKeys, pseudonym: string): Promise<number>;
}

/**
 * The port: who a person is (their keys, completed from what the app recorded: a link, or an
 * approval naming both their Slack id and login), and the sections to export and erase.
 */
export interface PersonalData {
  resolve(first: PersonKeys): Promise<PersonKeys>;
  /**
   * In the order they are erased: what resolve reads to complete the keys (their account link)
   * last, so an erase stopped half way and run again still knows all of their names.
   */
  sections: readonly PersonalDataSection[];
  /** Numbers of approvals still open that name them (never erased). */
  openApprovals(keys: PersonKeys): Promise<string[]>;
  /** Deletes their idle delivery lanes; says how many are in use. */
  eraseLanes(keys: PersonKeys): Promise<{ deleted: number; busy: number }>;
}

/** Everything held about a person, by section. */
export async function exportPerson(
  data: PersonalData,
  who: string,
): Promise<{ keys: PersonKeys; sections: PersonalExport }> {
  const keys = await data.resolve(keysOf(who));
  const sections: PersonalExport = {};
  for (const section of data.sections) sections[section.name] = await section.find(keys);
  return { keys, sections };
}

/** Erases a person as the header says; run again after open approvals ended. */
export async function erasePerson(
  data: PersonalData,
  who: string,
  pseudonym: string,
): Promise<{ keys: PersonKeys } & EraseOutcome> {
  const keys = await data.resolve(keysOf(who));
  const changed: Record<string, number> = {};
  for (const section of data.sections) changed[section.name] = await section.erase(keys, pseudonym);
  const lanes = await data.eraseLanes(keys);
  changed.lanes = lanes.deleted;
  return { keys, changed, openApprovals: await data.openApprovals(keys), busyLanes: lanes.busy };
}
