import { AppError } from '../errors.ts';
import type { ApprovalService, Department } from './approval-types.ts';
import { loginKey } from './person.ts';

/**
 * Whether the service's directory knows the person a department answer is about. The service
 * answers an unknown login with made-up defaults rather than an error: the login as its account,
 * the login's local part as the name, and every other field empty. Anything more is someone.
 */
export function knownToService(department: Department): boolean {
  const { leaders, ...fields } = department;
  const filled = [
    fields.mobile,
    fields.productLine,
    fields.department,
    fields.subDepartment,
    leaders.subDepartment,
    leaders.department,
    leaders.productLine,
  ].some((value) => value !== '');
  // Made up from the login as it was asked (its account), in whatever case it was asked: compared
  // with the answer's own account, not the caller's spelling (a cached answer may be another's).
  return filled || department.name !== localPart(department.login);
}

/**
 * Logins the service's lookup refuses before looking anyone up (one character, or starting with
 * `.`, `-`, `_` or `@`): it can never resolve them, though a start would accept them.
 */
export function lookupRefuses(login: string): boolean {
  return login.length < 2 || /^[.\-_@]/.test(login);
}

/**
 * - `known`: the service's directory has this person, who can sign in and decide;
 * - `unknown`: it does not; an approval for them could never be decided;
 * - `unchecked`: the lookup failed (the service unreachable): the start itself will tell.
 */
export type ApproverCheck = 'known' | 'unknown' | 'unchecked';

/** Asks the service's directory whether it knows `login`, as the approver of a new approval. */
export async function checkApprover(
  service: Pick<ApprovalService, 'getDepartment'>,
  login: string,
): Promise<ApproverCheck> {
  if (lookupRefuses(login)) return 'unknown';
  try {
    return knownToService(await service.getDepartment(login)) ? 'known' : 'unknown';
  } catch {
    return 'unchecked';
  }
}

/** An approval was about to be started for someone the service does not know: nothing started. */
export class UnknownApproverError extends AppError {
  readonly login: string;

  constructor(login: string) {
    super('approver_unknown', 'The approval service does not know the approver; nothing started');
    this.login = login;
  }
}

export interface DepartmentCacheOptions {
  /** How long a person the service knows is kept (the org chart changes slowly). */
  knownMs: number;
  /** How long an unknown one is kept: short, so someone just added is found soon. */
  unknownMs: number;
  /** Entries kept at most; the oldest go first. */
  maxEntries: number;
  now: () => number;
}

export const DEPARTMENT_CACHE_DEFAULTS: DepartmentCacheOptions = {
  knownMs: 10 * 60_000,
  unknownMs: 60_000,
  maxEntries: 5_000,
  now: () => Date.now(),
};

/**
 * The service's department lookup, each answer kept a while (by login, compared as the service
 * compares them): opening the form walks the requester's chain, and checking the approver picked
 * from it then costs nothing. Failures are not kept.
 */
export function cacheDepartments<S extends Pick<ApprovalService, 'getDepartment'>>(
  service: S,
  options: Partial<DepartmentCacheOptions> = {},
): S {
  const { knownMs, unknownMs, maxEntries, now } = { ...DEPARTMENT_CACHE_DEFAULTS, ...options };
  const kept = new Map<string, { department: Department; until: number }>();
  const getDepartment = async (login: string): Promise<Department> => {
    const key = loginKey(login);
    const hit = kept.get(key);
    if (hit && hit.until > now()) return hit.department;
    kept.delete(key);
    const department = await service.getDepartment(login);
    const ttl = knownToService(department) ? knownMs : unknownMs;
    kept.set(key, { department, until: now() + ttl });
    // A Map keeps insertion order: the first key is the oldest entry.
    if (kept.size > maxEntries) kept.delete(kept.keys().next().value as string);
    return department;
  };
  return new Proxy(service, {
    get: (target, property, receiver) =>
      property === 'getDepartment' ? getDepartment : Reflect.get(target, property, receiver),
  });
}

function localPart(login: string): string {
  const at = login.indexOf('@');
  return at === -1 ? login : login.slice(0, at);
}
