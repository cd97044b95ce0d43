import { describe, expect, it } from 'vitest';
import { loginKey, sameLogin, samePerson } from '../../src/approvals/person.ts';

describe('a person', () => {
  it('compares logins case-insensitively, and nobody equals nobody', () => {
    expect(sameLogin('Maria.Lopez@corp.example', 'maria.lopez@CORP.example')).toBe(true);
    expect(sameLogin('maria@corp.example', 'alex@corp.example')).toBe(false);
    expect(sameLogin(null, null)).toBe(false);
    expect(sameLogin('', '')).toBe(false);
    expect(loginKey('Maria@Corp.Example')).toBe('maria@corp.example');
  });

  it('is the same person by chat account or by login', () => {
    expect(samePerson({ chatId: 'U1', login: null }, { chatId: 'U1', login: 'x@y' })).toBe(true);
    expect(samePerson({ chatId: null, login: 'X@y' }, { chatId: 'U2', login: 'x@Y' })).toBe(true);
    expect(samePerson({ chatId: 'U1', login: 'a@y' }, { chatId: 'U2', login: 'b@y' })).toBe(false);
    expect(samePerson({ chatId: null, login: null }, { chatId: null, login: null })).toBe(false);
  });
});
