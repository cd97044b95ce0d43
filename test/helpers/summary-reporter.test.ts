import { describe, expect, it } from 'vitest';
import { postgresSkipReason } from './databases.ts';
import { summaryLines } from './summary-reporter.ts';

const RUN_POSTGRES = 'TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres npm test';

describe('why the Postgres suites are skipped', () => {
  it('says how to turn them on, and that a Postgres is listening when one is', () => {
    const reason = postgresSkipReason(undefined, true);
    expect(reason).toContain('TEST_POSTGRES_URL is not set');
    expect(reason).toContain('a Postgres is listening on 127.0.0.1:5432');
    expect(reason).toContain(RUN_POSTGRES);
  });

  it('says how to turn them on when no Postgres is listening', () => {
    const reason = postgresSkipReason(undefined, false);
    expect(reason).toContain(RUN_POSTGRES);
    expect(reason).not.toContain('is listening');
  });

  it('skips nothing when TEST_POSTGRES_URL is set', () => {
    expect(postgresSkipReason('postgres://x@db/y', true)).toBeUndefined();
  });
});

describe('the summary that ends the run', () => {
  it('keeps its first line, then says how many tests each reason skipped and the reason', () => {
    const reason = postgresSkipReason(undefined, true) ?? '';
    const lines = summaryLines([
      { outcome: 'passed', suites: ['approval store on sqlite'] },
      { outcome: 'skipped', suites: [`approval store on postgres (skipped: ${reason})`] },
      { outcome: 'skipped', suites: [`retention on postgres (skipped: ${reason})`, 'inner'] },
      { outcome: 'skipped', suites: ['the sandbox in a browser (skipped: no /usr/bin/chromium)'] },
      { outcome: 'failed', suites: [] },
    ]);
    expect(lines[0]).toBe('1 passed, 1 failed, 3 skipped');
    expect(lines.slice(1)).toEqual([`  2 skipped: ${reason}`, '  1 skipped: no /usr/bin/chromium']);
    expect(lines.join('\n')).toContain(RUN_POSTGRES);
  });
});
