import type { Department } from './approval-types.ts';
import { loginKey } from './person.ts';

/**
 * The nearest leader who is not the requester: sub-department, then department, then product
 * line; empty values and repeats skipped. Undefined when there is none (a top leader, or a
 * person the service does not know).
 */
export function suggestApprover(
  department: Department,
  requesterLogin: string,
): string | undefined {
  return leadersOf(department, requesterLogin)[0];
}

/**
 * The requester's leaders up the chain, nearest first (sub-department, department, product line),
 * without empty values, repeats or the requester: the next one is who to ask when one is away.
 */
export function leadersOf(department: Department, requesterLogin: string): string[] {
  const { subDepartment, department: dept, productLine } = department.leaders;
  const self = loginKey(requesterLogin);
  const seen = new Set<string>();
  return [subDepartment, dept, productLine].filter((login) => {
    const key = loginKey(login);
    if (login === '' || key === self || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Product line › department › sub-department, the levels the service knows. */
export function departmentChain(department: Department): string[] {
  return [department.productLine, department.department, department.subDepartment].filter(
    (name) => name !== '',
  );
}
