import type { Department } from './approval-types.ts';

/**
 * The nearest leader who is not the requester: sub-department, then department, then product
 * line; empty values and repeats skipped. Undefined when there is none (a top leader, or a
 * person the service does not know).
 */
export function suggestApprover(
  department: Department,
  requesterLogin: string,
): string | undefined {
  const { subDepartment, department: dept, productLine } = department.leaders;
  const self = requesterLogin.toLowerCase();
  return [subDepartment, dept, productLine].find(
    (login) => login !== '' && login.toLowerCase() !== self,
  );
}

/** Product line › department › sub-department, the levels the service knows. */
export function departmentChain(department: Department): string[] {
  return [department.productLine, department.department, department.subDepartment].filter(
    (name) => name !== '',
  );
}
