import { describe, expect, it } from 'vitest';
import type { SummaryLine } from '../../src/approvals/approval-report.ts';
import { csvField, csvLine, tsvField, unneutralised } from '../../src/operator/csv.ts';
import { summaryText } from '../../src/operator/report-command.ts';

// What a spreadsheet would run if a field started with it: a formula after spaces (Calc and
// Excel skip them), the full-width signs an East Asian Excel reads as the ASCII ones, a NUL or a
// line break (OWASP ASVS 1.2.10 lists the NUL).
const HOSTILE = [
  '=1+1',
  '+1+1',
  '-1+1',
  '@SUM(A1)',
  '\t=1+1',
  '\r=1+1',
  '\n=1+1',
  '\0=1+1',
  '  =HYPERLINK("http://evil.example")',
  '\u3000=1+1',
  '\uFF1DHYPERLINK("http://evil.example")',
  '\uFF0B1+1',
  '\uFF0D1+1',
  '\uFF20SUM(A1)',
];

/** The field as a spreadsheet reads it back from one CSV line (RFC 4180 quoting undone). */
const readBack = (field: string) =>
  field.startsWith('"') ? field.slice(1, -1).replaceAll('""', '"') : field;

describe('csvField', () => {
  it.each(HOSTILE)('shows %j as text: a quote first', (value) => {
    expect(readBack(csvField(value)).startsWith("'")).toBe(true);
    // And the links import reads back what was exported.
    expect(unneutralised(readBack(csvField(value)))).toBe(value);
  });

  it('leaves ordinary text as it is, quoting what must be', () => {
    expect(csvField('Sam’s laptop')).toBe('Sam’s laptop');
    expect(csvField('a, "b"')).toBe('"a, ""b"""');
    expect(csvLine(['x', null, 2])).toBe('x,,2');
  });
});

describe('the summary’s tab-separated table', () => {
  const line = (group: string): SummaryLine => ({
    group,
    count: 1,
    decided: 1,
    approved: 1,
    approvedShare: 1,
    medianHours: 2,
    p90Hours: 2,
    open: 0,
    openOverAWeek: 0,
  });

  it.each(HOSTILE)('shows a template named %j as text, in its own column and line', (name) => {
    const lines = summaryText(
      {
        total: line('all'),
        groups: [line(name)],
        openByAge: { 'under-1d': 0, '1d-3d': 0, '3d-7d': 0, 'over-7d': 0 },
      },
      { range: {}, by: 'template' },
    );
    const row = lines[3] ?? '';
    expect(lines).toHaveLength(5);
    expect(row.startsWith("'")).toBe(true);
    expect(row.split('\t')).toHaveLength(7);
    expect(row).toBe(`${tsvField(name)}\t1\t100%\t2 h\t2 h\t0\t0`);
  });

  // A control character the table writes as a space, before a formula's start: once it is a
  // space, the cell starts like '  =HYPERLINK(…)', which a spreadsheet runs (it skips the spaces).
  it.each([
    '\u0001=1+1',
    '\u001b+1+1',
    '\u007f-1+1',
    '\u0085@SUM(A1)',
    '\u0007\u0008=HYPERLINK("http://evil.example")',
  ])('shows a template named %j as text once its control characters are spaces', (name) => {
    const cell = tsvField(name);
    expect(cell.startsWith("'")).toBe(true);
    expect(cell).not.toMatch(/\p{Cc}/u);
  });

  it('leaves an ordinary name as it is', () => {
    expect(tsvField('Laptop – 14"')).toBe('Laptop – 14"');
  });
});
