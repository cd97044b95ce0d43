import { describe, expect, it } from 'vitest';
import type { Department } from '../../src/approvals/approval-types.ts';
import { parseLaterSteps, resolveLaterSteps } from '../../src/approvals/workflow-steps.ts';

// What a workflow author may type in the step's `later_steps`, read without lookups, then each
// Slack user by their login and each login checked with the service's directory.

describe('a workflow step’s later steps as typed', () => {
  it.each([
    ['', []],
    ['  \n , ', []],
    [
      'second-level leader, @chen.hao@corp.example',
      [
        { kind: 'rule', rule: { kind: 'leader', level: 'second' } },
        { kind: 'rule', rule: { kind: 'person', login: 'chen.hao@corp.example' } },
      ],
    ],
    [
      '直属领导，二级领导、产品线领导; Product Line  Leader',
      [
        { kind: 'rule', rule: { kind: 'leader', level: 'nearest' } },
        { kind: 'rule', rule: { kind: 'leader', level: 'second' } },
        { kind: 'rule', rule: { kind: 'leader', level: 'product-line' } },
        { kind: 'rule', rule: { kind: 'leader', level: 'product-line' } },
      ],
    ],
    [
      '<@U0CHEN>\n<@W0ZHOU|zhou>',
      [
        { kind: 'slack-user', chatId: 'U0CHEN' },
        { kind: 'slack-user', chatId: 'W0ZHOU' },
      ],
    ],
  ])('reads %j', (typed, steps) => {
    expect(parseLaterSteps(typed)).toEqual({ ok: true, steps });
  });

  it.each([
    ['finance director', { code: 'not-a-step', line: 'finance director' }],
    ['a1, b1, c1, d1, e1, f1', { code: 'too-many', limit: 5 }],
    ['<@U0CHEN> please', { code: 'not-a-step', line: '<@U0CHEN> please' }],
  ])('refuses %j', (typed, problem) => {
    expect(parseLaterSteps(typed)).toEqual({ ok: false, problem });
  });

  it('names a Slack user by their login, and refuses one without, or a login the service does not know', async () => {
    const known = new Set(['chen.hao@corp.example']);
    const lookups = {
      loginOf: async (chatId: string) => (chatId === 'U0CHEN' ? 'chen.hao@corp.example' : null),
      service: {
        // The service answers an unknown login with made-up defaults (service-directory.ts).
        getDepartment: async (login: string): Promise<Department> => ({
          login,
          name: known.has(login) ? 'Chen Hao' : (login.split('@')[0] as string),
          mobile: '',
          productLine: '',
          department: '',
          subDepartment: '',
          leaders: { subDepartment: '', department: '', productLine: '' },
        }),
      },
    };
    const parsed = (text: string) => {
      const p = parseLaterSteps(text);
      if (!p.ok) throw new Error('not parsed');
      return p.steps;
    };
    expect(await resolveLaterSteps(parsed('<@U0CHEN>, nearest leader'), lookups)).toEqual({
      ok: true,
      rules: [
        { kind: 'person', login: 'chen.hao@corp.example' },
        { kind: 'leader', level: 'nearest' },
      ],
    });
    expect(await resolveLaterSteps(parsed('<@U0GHOST>'), lookups)).toEqual({
      ok: false,
      problem: { code: 'no-login', chatId: 'U0GHOST' },
    });
    expect(await resolveLaterSteps(parsed('nobody@corp.example'), lookups)).toEqual({
      ok: false,
      problem: { code: 'unknown-login', login: 'nobody@corp.example' },
    });
  });
});
