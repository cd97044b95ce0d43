import { describe, expect, it } from 'vitest';
import { csvField, csvLine, unneutralised } from '../../src/operator/csv.ts';

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
