import { describe, expect, it } from 'vitest';
import type { Department } from '../../src/approvals/approval-types.ts';
import {
  cacheDepartments,
  checkApprover,
  knownToService,
  lookupRefuses,
} from '../../src/approvals/service-directory.ts';

/** What the service answers for a login it has never heard of. */
const madeUp = (login: string): Department => ({
  login,
  name: login.split('@')[0] ?? login,
  mobile: '',
  productLine: '',
  department: '',
  subDepartment: '',
  leaders: { subDepartment: '', department: '', productLine: '' },
});

describe('knownToService', () => {
  it.each([
    ['the made-up defaults of an unknown login', madeUp('sam@personal.example'), false],
    ['a person with a mobile number only', { ...madeUp('a@corp.example'), mobile: '1380' }, true],
    [
      'a top leader with a product line and no leader',
      { ...madeUp('zhou.lan@corp.example'), productLine: 'Cloud' },
      true,
    ],
    [
      'a person with a leader and no department names',
      {
        ...madeUp('b@corp.example'),
        leaders: { subDepartment: 'c@corp.example', department: '', productLine: '' },
      },
      true,
    ],
    [
      'a person whose name is not the local part',
      { ...madeUp('d@corp.example'), name: 'Dee' },
      true,
    ],
  ])('%s: %s', (_what, department, known) => {
    expect(knownToService(department)).toBe(known);
  });
});

describe('lookupRefuses', () => {
  it.each([
    ['x', true],
    ['.dot@corp.example', true],
    ['-dash@corp.example', true],
    ['_under@corp.example', true],
    ['@corp.example', true],
    ['ab', false],
    ['maria.lopez@corp.example', false],
  ])('%s: %s', (login, refused) => {
    expect(lookupRefuses(login)).toBe(refused);
  });
});

describe('checkApprover', () => {
  const service = (answer: (login: string) => Promise<Department>) => ({ getDepartment: answer });

  it('says known, unknown, or unchecked when the lookup fails, never asking for a refused login', async () => {
    const asked: string[] = [];
    const lookup = service(async (login) => {
      asked.push(login);
      if (login === 'down@corp.example') throw new Error('ECONNREFUSED');
      return login === 'maria@corp.example' ? { ...madeUp(login), name: 'Maria' } : madeUp(login);
    });
    expect(await checkApprover(lookup, 'maria@corp.example')).toBe('known');
    expect(await checkApprover(lookup, 'sam@personal.example')).toBe('unknown');
    expect(await checkApprover(lookup, 'down@corp.example')).toBe('unchecked');
    expect(await checkApprover(lookup, '_x@corp.example')).toBe('unknown');
    expect(asked).toEqual(['maria@corp.example', 'sam@personal.example', 'down@corp.example']);
  });
});

describe('checkApprover through the cache', () => {
  it('keeps an unknown login unknown whatever case it was looked up in before', async () => {
    const answer = async (login: string) => madeUp(login);
    const cached = cacheDepartments({ getDepartment: answer });
    expect(await checkApprover(cached, 'Nobody@corp.example')).toBe('unknown');
    // Retyped in lower case within a minute: the kept answer's name is "Nobody".
    expect(await checkApprover(cached, 'nobody@corp.example')).toBe('unknown');
  });
});

describe('cacheDepartments', () => {
  function counted() {
    const calls: string[] = [];
    let failNext = false;
    return {
      calls,
      failOnce: () => {
        failNext = true;
      },
      service: {
        async getDepartment(login: string): Promise<Department> {
          calls.push(login);
          if (failNext) {
            failNext = false;
            throw new Error('timeout');
          }
          return login.startsWith('known') ? { ...madeUp(login), mobile: '1' } : madeUp(login);
        },
        other: () => 'passed through',
      },
    };
  }

  it('asks once per login (as the service compares logins) until the entry ages out', async () => {
    let now = 0;
    const raw = counted();
    const cached = cacheDepartments(raw.service, { knownMs: 1000, unknownMs: 100, now: () => now });
    await cached.getDepartment('known@corp.example');
    await cached.getDepartment('KNOWN@corp.example');
    expect(raw.calls).toHaveLength(1);
    now = 999;
    await cached.getDepartment('known@corp.example');
    expect(raw.calls).toHaveLength(1);
    now = 1000;
    await cached.getDepartment('known@corp.example');
    expect(raw.calls).toHaveLength(2);
    expect(cached.other()).toBe('passed through');
  });

  it('keeps an unknown login only briefly, so someone just added is found soon', async () => {
    let now = 0;
    const raw = counted();
    const cached = cacheDepartments(raw.service, { knownMs: 1000, unknownMs: 100, now: () => now });
    await cached.getDepartment('new@corp.example');
    now = 100;
    await cached.getDepartment('new@corp.example');
    expect(raw.calls).toEqual(['new@corp.example', 'new@corp.example']);
  });

  it('keeps no failure, and no more than maxEntries logins', async () => {
    const raw = counted();
    const cached = cacheDepartments(raw.service, { maxEntries: 2, now: () => 0 });
    raw.failOnce();
    await expect(cached.getDepartment('known-a@corp.example')).rejects.toThrow('timeout');
    await cached.getDepartment('known-a@corp.example');
    await cached.getDepartment('known-b@corp.example');
    await cached.getDepartment('known-c@corp.example');
    await cached.getDepartment('known-c@corp.example');
    expect(raw.calls).toHaveLength(4);
    // a was the oldest: it went when c came.
    await cached.getDepartment('known-a@corp.example');
    expect(raw.calls).toHaveLength(5);
  });
});
