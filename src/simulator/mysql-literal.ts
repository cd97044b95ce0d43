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

/**
 * Applies MySQL's backslash escapes, then the column's length and its character set, as MySQL
 * would. The caller checks first that the literal is not broken (an odd run of trailing
 * backslashes). Returns the driver's error text without its prefix.
 */
export function storeInColumn(value: string, column: string, maxLength: number): StoreResult {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = value[i + 1] ?? '';
    out += ESCAPES[next] ?? next;
    i++;
  }
  // Strict mode checks the length first: a value both too long and holding an emoji is too long.
  if ([...out].length > maxLength)
    return { ok: false, error: `Data too long for column '${column}' at row 1` };
  const fourByte = /[\u{10000}-\u{10FFFF}]/u.exec(out);
  if (fourByte) {
    const bytes = [...Buffer.from(fourByte[0], 'utf8')]
      .map((b) => `\\x${b.toString(16).toUpperCase()}`)
      .join('');
    return {
      ok: false,
      error: `Incorrect string value: '${bytes}' for column '${column}' at row 1`,
    };
  }
  return { ok: true, value: out };
}
