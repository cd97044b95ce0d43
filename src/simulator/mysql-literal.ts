/**
 * How the real service's MySQL treats a value pasted into a single-quoted SQL literal
 * (the service builds its INSERT by string interpolation, on a 3-byte `utf8` table).
 */

export type StoreResult = { ok: true; value: string } | { ok: false; error: string };

const ESCAPES: Record<string, string> = {
  '0': '\0',
  b: '\b',
  n: '\n',
  r: '\r',
  t: '\t',
  Z: '\x1a',
  '\\': '\\',
  "'": "'",
  '"': '"',
  // MySQL keeps the backslash before % and _ (they only matter in LIKE patterns).
  '%': '\\%',
  _: '\\_',
};

/** Applies MySQL's backslash escapes, the column's length and its character set, as MySQL would. */
export function storeInColumn(value: string, column: string, maxLength: number): StoreResult {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = value[i + 1];
    if (next === undefined) {
      // The backslash escapes the closing quote: the statement no longer parses.
      return {
        ok: false,
        error: `DBD::mysql::db do failed: You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '' at line 1`,
      };
    }
    out += ESCAPES[next] ?? next;
    i++;
  }
  const fourByte = /[\u{10000}-\u{10FFFF}]/u.exec(out);
  if (fourByte) {
    const bytes = [...Buffer.from(fourByte[0], 'utf8')]
      .map((b) => `\\x${b.toString(16).toUpperCase()}`)
      .join('');
    return {
      ok: false,
      error: `DBD::mysql::db do failed: Incorrect string value: '${bytes}' for column '${column}' at row 1`,
    };
  }
  if ([...out].length > maxLength) {
    return {
      ok: false,
      error: `DBD::mysql::db do failed: Data too long for column '${column}' at row 1`,
    };
  }
  return { ok: true, value: out };
}
