import { describe, expect, it } from 'vitest';
import { AppError, isAppError } from '../src/errors.ts';

describe('isAppError', () => {
  it('knows an AppError and its subclasses', () => {
    class DatabaseError extends AppError {}
    expect(isAppError(new AppError('x', 'said'))).toBe(true);
    expect(isAppError(new DatabaseError('database_unavailable', 'said'))).toBe(true);
  });

  it('knows one thrown by another copy of the module, as the sandbox beside the bundled entry point throws', () => {
    // The sandbox's own copy of errors.ts: the same class, another identity.
    const copy = class AppError extends Error {
      constructor(
        readonly code: string,
        message: string,
      ) {
        super(message);
      }
    };
    class SqliteInUseError extends copy {}
    expect(new SqliteInUseError('sqlite_in_use', 'said') instanceof AppError).toBe(false);
    expect(isAppError(new copy('service_credentials', 'said'))).toBe(true);
    expect(isAppError(new SqliteInUseError('sqlite_in_use', 'said'))).toBe(true);
  });

  it('takes nothing else for one: a plain error with a code, a non-error', () => {
    expect(isAppError(Object.assign(new Error('EADDRINUSE'), { code: 'EADDRINUSE' }))).toBe(false);
    expect(isAppError({ code: 'x', message: 'said' })).toBe(false);
    expect(isAppError(undefined)).toBe(false);
  });
});
