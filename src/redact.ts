/**
 * The one way secrets are hidden, for logs, errors and the configuration dump. Database URLs are
 * read as text, not parsed: pg accepts forms URL parsing refuses (a `#`, `/`, `?` or `@` left
 * unescaped in a password), and a URL that cannot be parsed must not be printed whole either.
 */

/** What stands where a secret was. */
export const MASK = '***';

/** A secret value as it may be printed: present or not, never what it is. */
export function maskSecret(value: string | undefined): string | undefined {
  return value ? MASK : undefined;
}

// Query or key=value parameters whose value is a credential (libpq's and pg's names).
const SECRET_PARAMETER = /([?&;\s]|^)((?:ssl)?password|passfile|sslkey|pass)=([^&\s]*)/gi;
const SECRET_NAME = /^(?:(?:ssl)?password|passfile|sslkey|pass)$/i;
// A URL's query parameter, as pg reads it (URLSearchParams): its name may be percent-encoded
// (`%70assword` is `password`) and its value runs to the next `&`, spaces included (pg re-encodes
// a space rather than ending the value there).
const QUERY_PARAMETER = /([?&])([^=&]*)=([^&]*)/g;

function isSecretName(name: string): boolean {
  try {
    return SECRET_NAME.test(decodeURIComponent(name.replace(/\+/g, ' ')));
  } catch {
    return SECRET_NAME.test(name);
  }
}

/**
 * A connection string with every password hidden: the userinfo's password (everything after
 * the user up to the last `@` of the authority, so an unescaped `@`, `#`, `/` or `?` in it is
 * hidden too), and `password=`-like parameters in a query or a `key=value` string. Anything else
 * (a SQLite path, `:memory:`) is returned as it is.
 */
export function redactUrl(url: string): string {
  let text = url;
  const scheme = /^([a-z][a-z0-9+.-]*:\/\/)/i.exec(text);
  if (scheme) {
    const rest = text.slice(scheme[0].length);
    // The authority ends at the last `@` before the host: a password may hold `@` unescaped.
    const at = rest.lastIndexOf('@');
    if (at >= 0) {
      const userinfo = rest.slice(0, at);
      const colon = userinfo.indexOf(':');
      const user = colon >= 0 ? userinfo.slice(0, colon) : userinfo;
      text = `${scheme[0]}${user}${colon >= 0 ? `:${MASK}` : ''}${rest.slice(at)}`;
    }
    text = text.replace(QUERY_PARAMETER, (m, before: string, name: string) =>
      isSecretName(name) ? `${before}${name}=${MASK}` : m,
    );
  }
  return text.replace(SECRET_PARAMETER, (_m, before: string, key: string) => {
    return `${before}${key}=${MASK}`;
  });
}

/**
 * `text` with each of `secrets` (and each database URL's password) hidden: for error messages
 * that may quote what they were given (a driver's "invalid URL …").
 */
export function redactText(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret) continue;
    // A URL as a whole first (its redacted form keeps the user and host), then any stray copy of
    // its password alone; any other secret (a token) entirely.
    const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(secret);
    out = out.split(secret).join(isUrl ? redactUrl(secret) : MASK);
    for (const password of passwordsIn(secret)) out = out.split(password).join(MASK);
  }
  return out;
}

/** The passwords a connection string carries, as written and decoded (to hide either copy). */
function passwordsIn(url: string): string[] {
  const found: string[] = [];
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (scheme) {
    const rest = url.slice(scheme[0].length);
    const at = rest.lastIndexOf('@');
    const colon = at >= 0 ? rest.slice(0, at).indexOf(':') : -1;
    if (colon >= 0) found.push(rest.slice(colon + 1, at));
    for (const match of url.matchAll(QUERY_PARAMETER))
      if (match[3] && isSecretName(match[2] ?? '')) found.push(match[3]);
  }
  for (const match of url.matchAll(SECRET_PARAMETER)) if (match[3]) found.push(match[3]);
  const withDecoded = found.flatMap((p) => {
    try {
      const decoded = decodeURIComponent(p);
      return decoded === p ? [p] : [p, decoded];
    } catch {
      return [p];
    }
  });
  // Very short values would hide unrelated text (and are no secret worth the name).
  return withDecoded.filter((p) => p.length >= 3);
}
