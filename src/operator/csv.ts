/**
 * CSV the operator commands write (the links export, the approvals report) and read (the links
 * import), one way: RFC 4180 quoting, and safe to open in a spreadsheet.
 */

/**
 * A field starting like this is run as a formula by a spreadsheet (as OWASP lists them): = + - @,
 * also after spaces (which spreadsheets skip) and as the full-width signs an East Asian Excel
 * reads as them, or a tab, a line break or a NUL first.
 */
const FORMULA_START = /^[\s\0]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]|^[\t\r\n\0]/;

/**
 * A CSV field a spreadsheet shows as text: one starting like a formula (FORMULA_START) gets a '
 * in front, so opening the export runs nothing a name, a login or a title says; quoted when it
 * holds a comma, a quote or a line break.
 */
export function csvField(value: string): string {
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line of values (null and undefined as empty fields, numbers as written). */
export function csvLine(values: ReadonlyArray<string | number | null | undefined>): string {
  return values.map((v) => (v === null || v === undefined ? '' : csvField(String(v)))).join(',');
}

/** A character that moves to another column or line, or hides: C0 and C1 controls, line separators. */
const CONTROL = /^[\p{Cc}\u2028\u2029]$/u;

/**
 * A field of a tab-separated table the operator reads or pastes into a spreadsheet: shown as text
 * as csvField shows it (a ' before a formula's start), with tabs, line breaks and other control
 * characters made spaces, so a name cannot add a column or forge a line.
 */
export function tsvField(value: string): string {
  // Spaces first, then the formula test: a control character that is not a space to
  // FORMULA_START (\u0001, \u0085) becomes one, and '\u0001=1+1' would be ' =1+1'.
  const text = [...value].map((c) => (CONTROL.test(c) ? ' ' : c)).join('');
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** An exported field as it was before csvField's ' (a file written by hand keeps its '). */
export function unneutralised(field: string): string {
  return field.startsWith("'") && FORMULA_START.test(field.slice(1)) ? field.slice(1) : field;
}
