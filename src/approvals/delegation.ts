/**
 * Delegates while away: "until <date>, send new requests for me to <person>". People are service
 * logins here (person.ts): a delegation is from one login to another, and who they are on the chat
 * is asked through the Identities when a message is addressed, never stored with it.
 *
 * A delegation only changes who NEW requests are suggested for or sent to (the form's suggestion,
 * a template's approver, Request again, the workflow step). Approvals already waiting stay with
 * the approver the service has: the service decides who may decide, and the app never moves an
 * approval it started.
 */

import type { ApprovalService } from './approval-types.ts';
import { loginKey, sameLogin } from './person.ts';
import { checkApprover } from './service-directory.ts';

export interface Delegation {
  /** Who is away: their service login. */
  from: string;
  /** Who gets their new requests meanwhile: a service login. */
  to: string;
  /** The first moment it no longer applies (the start of the day they are back). */
  until: Date;
  /** When it was set. */
  setAt: Date;
}

/** Whether a delegation applies at `now`: an expired one is ignored everywhere. */
export function inForce(delegation: Delegation, now: Date): boolean {
  return delegation.until.getTime() > now.getTime();
}

/** Who gets a person's new requests, and through which delegations (none: the person themself). */
export interface Delegated {
  approver: string;
  /** The delegations followed, in order; empty when nobody was delegated to. */
  via: Delegation[];
}

/**
 * Who a new request for `person` goes to at `now`, given every delegation on record:
 * - the chain is followed to its end (A → B → C: C), ignoring expired delegations;
 * - a cycle ends at the last person before the chain would come back to someone it has already
 *   passed (A → B → A: B). Everyone in a cycle is away; the last one reached is the one the
 *   delegations most recently point at, and the walk always ends;
 * - the requester is never the result: a chain that reaches the requester goes on through the
 *   requester's own delegate (they are away too, and trust that person), and one that ends at the
 *   requester stops at the person before them. When the requester is `person` themself, nothing
 *   is followed (asking yourself is refused elsewhere, by the draft check).
 */
export function delegateFor(
  person: string,
  delegations: readonly Delegation[],
  now: Date,
  requester: string | null,
): Delegated {
  if (sameLogin(person, requester)) return { approver: person, via: [] };
  const byFrom = new Map<string, Delegation>();
  for (const d of delegations) if (inForce(d, now)) byFrom.set(loginKey(d.from), d);
  const visited = new Set([loginKey(person)]);
  // The walk, and the last point on it that is not the requester.
  const path: Delegation[] = [];
  let end = { approver: person, steps: 0 };
  let current = person;
  for (;;) {
    const next = byFrom.get(loginKey(current));
    if (!next || visited.has(loginKey(next.to))) break;
    visited.add(loginKey(next.to));
    path.push(next);
    current = next.to;
    if (!sameLogin(current, requester)) end = { approver: current, steps: path.length };
  }
  return { approver: end.approver, via: path.slice(0, end.steps) };
}

/**
 * `delegated` (what delegateFor found for `person`) ending at the last delegate the service's
 * directory still knows: someone who left after being named would get requests nobody could ever
 * decide (a form refused at Submit, a workflow step failed), so the chain is cut back to the one
 * before them, the person themself at worst. Never the requester, as delegateFor. A directory that
 * cannot be asked now keeps the delegate (the start tells, as for any approver). Asked only when
 * someone is delegated to, so nobody away costs no lookup.
 */
export async function knownDelegate(
  service: Pick<ApprovalService, 'getDepartment'>,
  person: string,
  delegated: Delegated,
  requester: string | null,
): Promise<Delegated> {
  for (let steps = delegated.via.length; steps > 0; steps--) {
    const to = (delegated.via[steps - 1] as Delegation).to;
    if (sameLogin(to, requester)) continue;
    if ((await checkApprover(service, to)) !== 'unknown')
      return { approver: to, via: delegated.via.slice(0, steps) };
  }
  return { approver: person, via: [] };
}

/** Why a delegation cannot be set; none when it can. */
export type DelegationProblem =
  | 'yourself'
  | 'past'
  | 'too-far'
  | 'unknown-delegate'
  | 'service-unreachable'
  | 'no-login';

/**
 * How far ahead a delegation may end: a year. Longer is not "while away" but a standing redirect
 * nobody would remember setting (and never purged while in force); and its day is said without
 * its year ("until 3 Dec"), which only reads right within the year ahead.
 */
export const LONGEST_DELEGATION_MS = 365 * 24 * 3_600_000;

/**
 * Whether `from` may send new requests to `to` until `until`: not to themself, not ending before
 * now nor more than a year ahead, and only to someone the service's directory knows (an approval
 * for anyone else could never be decided). The directory is asked last, so the cheap refusals
 * cost no call.
 */
export async function checkDelegation(
  service: Pick<ApprovalService, 'getDepartment'>,
  draft: { from: string; to: string | null; until: Date },
  now: Date,
): Promise<DelegationProblem | undefined> {
  if (!draft.to) return 'no-login';
  if (sameLogin(draft.from, draft.to)) return 'yourself';
  if (!inForce({ ...draft, to: draft.to, setAt: now }, now)) return 'past';
  if (draft.until.getTime() - now.getTime() > LONGEST_DELEGATION_MS) return 'too-far';
  const known = await checkApprover(service, draft.to);
  if (known === 'unknown') return 'unknown-delegate';
  if (known === 'unchecked') return 'service-unreachable';
  return undefined;
}

/**
 * How long an expired delegation is kept before the retention job deletes it: long enough for
 * an admin to see what was set last month, short enough that nobody's leave stays on record.
 */
export const EXPIRED_DELEGATION_KEEP_MS = 30 * 24 * 3_600_000;

/** The delegations on record; the store executes it (store/delegation-store.ts). */
export interface Delegations {
  /** Sets (or replaces) `from`'s delegation. */
  set(delegation: Delegation): Promise<void>;
  /** Removes `from`'s delegation; whether there was one. */
  clear(from: string): Promise<boolean>;
  /** `from`'s delegation, in force or not; undefined when none is on record. */
  of(from: string): Promise<Delegation | undefined>;
  /** Those in force at `now`: what delegateFor follows. */
  inForceAt(now: Date): Promise<Delegation[]>;
  /** Every delegation on record, for an admin, by `from`. */
  list(): Promise<Delegation[]>;
}

/**
 * The delegate of `person` for a new request of `requester`, read from the store at `now`, whom
 * the service still knows (knownDelegate). Advice:
 * when the store cannot say, nobody is delegated to and the original stays (nothing blocks a
 * request).
 */
export async function currentDelegate(
  deps: {
    delegations?: Pick<Delegations, 'inForceAt'> | undefined;
    service: Pick<ApprovalService, 'getDepartment'>;
  },
  person: string,
  now: Date,
  requester: string | null,
): Promise<Delegated> {
  if (!deps.delegations) return { approver: person, via: [] };
  const all = await deps.delegations.inForceAt(now).catch(() => []);
  return knownDelegate(deps.service, person, delegateFor(person, all, now, requester), requester);
}
