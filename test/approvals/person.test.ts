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

  it('folds only ASCII letters: a look-alike that lower-cases to a login is someone else', () => {
    // U+212A KELVIN SIGN and U+0130 lower-case (in JavaScript) to `k` and `i̇`; the service's
    // MySQL lookups and SQLite's lower() leave them as they are, so they are other logins there.
    expect(sameLogin('\u212Aate@corp.example', 'kate@corp.example')).toBe(false);
    expect(sameLogin('\u0130van@corp.example', 'i\u0307van@corp.example')).toBe(false);
    expect(sameLogin('KATE@corp.example', 'kate@corp.example')).toBe(true);
  });

  it('is the same person by chat account or by login', () => {
    expect(samePerson({ chatId: 'U1', login: null }, { chatId: 'U1', login: 'x@y' })).toBe(true);
    expect(samePerson({ chatId: null, login: 'X@y' }, { chatId: 'U2', login: 'x@Y' })).toBe(true);
    expect(samePerson({ chatId: 'U1', login: 'a@y' }, { chatId: 'U2', login: 'b@y' })).toBe(false);
    expect(samePerson({ chatId: null, login: null }, { chatId: null, login: null })).toBe(false);
  });
});
