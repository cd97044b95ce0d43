import { describe, expect, it } from 'vitest';
import type { Department } from '../../src/approvals/approval-types.ts';
import { departmentChain, suggestApprover } from '../../src/approvals/suggest-approver.ts';

const department = (
  leaders: Department['leaders'],
  names: Partial<Department> = {},
): Department => ({
  login: 'me@corp.example',
  name: 'Me',
  mobile: '',
  productLine: 'Cloud',
  department: 'Infra',
  subDepartment: 'Storage',
  leaders,
  ...names,
});

describe('suggestApprover', () => {
  it('picks the sub-department leader first', () => {
    expect(
      suggestApprover(
        department({ subDepartment: 's@x', department: 'd@x', productLine: 'p@x' }),
        'me@corp.example',
      ),
    ).toBe('s@x');
  });

  it('skips the requester and empty levels, nearest first', () => {
    expect(
      suggestApprover(
        department({ subDepartment: 'Me@corp.example', department: '', productLine: 'p@x' }),
        'me@corp.example',
      ),
    ).toBe('p@x');
  });

  it('suggests nobody for the top of the chain', () => {
    expect(
      suggestApprover(
        department({ subDepartment: '', department: '', productLine: '' }),
        'me@corp.example',
      ),
    ).toBeUndefined();
  });
});

describe('departmentChain', () => {
  it('lists the levels the service knows, product line first', () => {
    const leaders = { subDepartment: '', department: '', productLine: '' };
    expect(departmentChain(department(leaders))).toEqual(['Cloud', 'Infra', 'Storage']);
    expect(departmentChain(department(leaders, { subDepartment: '' }))).toEqual(['Cloud', 'Infra']);
  });
});
