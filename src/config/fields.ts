import { isIP } from 'node:net';
import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import { redactUrl } from '../redact.ts';

/**
 * How one variable's text is read. Each reader refuses what it does not accept with a message
 * saying what the variable must be (loadConfig adds the variable's name and what was given, so a
 * problem reads "POLL_CONCURRENCY: must be …; was \"four\""), and carries `accepts`, the accepted
 * forms as docs/configuration.md's settings table states them (test/config.test.ts compares the
 * two, so the documentation cannot drift from what is accepted).
 */

/** The metadata each reader carries: the accepted forms, in the words of the settings table. */
export interface Accepted {
  accepts: string;
}

const documented = <T extends z.ZodType>(schema: T, accepts: string): T =>
  schema.meta({ accepts } satisfies Accepted);

const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/**
 * A whole number from `min` to `max`, in digits only: Number() would also take "1e3", "0x10",
 * "0b1" or "4.0" and read them as numbers the documentation never names.
 */
export const integer = (min: number, max: number) => {
  const must = `must be a whole number from ${min} to ${max}`;
  return documented(
    z
      .string()
      .trim()
      .regex(/^\d+$/, { error: must })
      .transform(Number)
      .pipe(z.number().min(min, { error: must }).max(max, { error: must })),
    `${min}–${max}`,
  );
};

/** A duration written as a whole number of `unit`s (from `min` to `max`), read in milliseconds. */
export const duration = (
  min: number,
  max: number,
  unit: 'seconds' | 'minutes' | 'hours' | 'days',
) => {
  const ms = { seconds: 1000, minutes: MINUTE_MS, hours: HOUR_MS, days: DAY_MS }[unit];
  return integer(min, max).transform((n) => n * ms);
};

/** One of a few words, exactly as written. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  documented(
    z.enum(values, {
      error: `must be ${values.length === 2 ? values.join(' or ') : `one of ${values.join(', ')}`}`,
    }),
    values.map((v) => `\`${v}\``).join(values.length === 2 ? ' or ' : ', '),
  );

/** `true` or `false`, read as a boolean. */
export const flag = () => oneOf(['true', 'false']).transform((v) => v === 'true');

/** Text that must merely be there (a name, a secret, an interface). */
export const text = () => documented(z.string().min(1), 'any text');

/**
 * An interface to listen on: an IP address (`0.0.0.0`, `127.0.0.1`, `::`) or a host name (a
 * compose service's may hold `_`). A URL, a port after it, an IPv6 address in brackets or a `*`
 * would fail only when the listener opens, without the variable's name.
 */
export const listenHost = () =>
  documented(
    z
      .string()
      .refine(
        (v) =>
          isIP(v) !== 0 ||
          /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/i.test(v),
        'must be an IP address or a host name, e.g. 127.0.0.1, 0.0.0.0 or :: (no scheme, port or brackets)',
      ),
    'IP address or host name',
  );

/**
 * A token of Slack's, recognised by its type prefix; `rotating` also takes the form Slack gives it
 * when the app has token rotation on (`xoxe.` before the type: an access token that expires).
 */
export const token = (prefix: string, kind: string, options: { rotating?: boolean } = {}) => {
  const prefixes = options.rotating ? [prefix, `xoxe.${prefix}`] : [prefix];
  return documented(
    z.string().refine((v) => prefixes.some((p) => v.startsWith(p)), `must be ${kind} (${prefix}…)`),
    prefixes.map((p) => `\`${p}…\``).join(' or '),
  );
};

/**
 * An http(s) URL with a host: the address calls are made to, so nothing else (`ftp://`, a bare
 * host name, white space a copy picked up) is taken for one.
 */
export const httpUrl = () =>
  documented(
    z.string().refine(isHttpUrl, 'must be an http(s) URL, e.g. https://approvals.example.com'),
    '`http://…` or `https://…` URL',
  );

const anHttpUrl = z.url({ protocol: /^https?$/ });
function isHttpUrl(value: string): boolean {
  return !/\s/.test(value) && anHttpUrl.safeParse(value).success;
}

/**
 * Where the database is: a SQLite file path, or a Postgres URL. Any other `scheme://` (a mistyped
 * `postgress://`, `mysql://`), a Postgres URL not at the very start (a space before it) or with
 * its `://` mistyped (`postgres:/…`), or libpq's `key=value … password=…` form would otherwise be
 * taken for a file name, made into folders and printed, password and all: a path holds no `://`
 * and no `user:password@`. (The store refuses most of them too, for the operator's commands;
 * here they are reported with every other problem, at start.)
 */
export const databaseUrl = () =>
  documented(
    z
      .string()
      .min(1)
      .refine(
        (v) => /^postgres(ql)?:\/\//i.test(v) || (!/:\/\/|:[^@]*@/.test(v) && redactUrl(v) === v),
        'must be a SQLite file path or a postgres:// (or postgresql://) URL',
      ),
    'a file path, or `postgres://…` or `postgresql://…`',
  );

/** A node-cron expression (five fields, or six with seconds first). */
export const cron = () =>
  documented(
    z.string().refine((v) => validCron(v), 'must be a node-cron expression, e.g. "*/30 * * * * *"'),
    'node-cron expression',
  );

/** A node-cron expression, or `off` (the shape reads it as no schedule). */
export const cronOrOff = () =>
  documented(
    z.string().refine((v) => v === 'off' || validCron(v), 'must be a node-cron expression or off'),
    'node-cron expression, or `off`',
  );

/**
 * A forward proxy's URL: http or https, with a host. Node's agent would refuse anything else at
 * the first call, quoting it password and all.
 */
export const proxyUrl = () =>
  documented(
    z.string().refine(isProxyUrl, 'not a proxy URL (http://host:port or https://host:port)'),
    '`http://host:port` or `https://host:port`',
  );

function isProxyUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

// A host name, an IPv4 address or a bare IPv6 one, maybe a domain (a leading `.` or `*.`), maybe a
// port (not after an IPv6 address), or `*`: what Node's agents and undici both match NO_PROXY
// entries against. Anything else they ignore without a word (a URL) or read differently from each
// other (`[::1]` is a host to undici only), and the call would go through the proxy. An empty
// entry (`localhost,`) both skip. An address range (`10.0.0.0/8`) they ignore too, but it is
// common in a cluster's or a machine's list and matches no host name; one that holds the
// service's own address is refused by the rules (rules.ts).
const NO_PROXY_HOST = /^(\*?\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*(:\d{1,5})?$/i;
const isNoProxyEntry = (entry: string) =>
  entry === '' ||
  entry === '*' ||
  isIP(entry) === 6 ||
  NO_PROXY_HOST.test(entry) ||
  addressRangeOf(entry) !== undefined;

/** A NO_PROXY entry's address range (`10.0.0.0/8`, `fd00::/8`), when it is one. */
export function addressRangeOf(
  entry: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [, address = '', bits] = /^([^/]+)\/(\d{1,3})$/.exec(entry) ?? [];
  const version = isIP(address);
  const prefix = Number(bits);
  if (version === 0 || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** NO_PROXY: `*`, or a comma-separated list of hosts and domains, each maybe with a port. */
export const noProxyList = () =>
  documented(
    z
      .string()
      .refine(
        (v) => v.split(',').every((entry) => isNoProxyEntry(entry.trim())),
        'must be * or hosts and domains separated by commas, each maybe with :port, e.g. localhost,::1,.corp.example,10.0.0.7:8080 (no URLs; an IPv6 address without brackets or port)',
      ),
    '`*`, or hosts, domains and address ranges separated by commas, each host maybe with `:port`',
  );

/** The accepted forms a variable's reader carries, through its optional, default and pipe wrappers. */
export function acceptsOf(schema: z.ZodType): string | undefined {
  const own = (schema.meta() as Partial<Accepted> | undefined)?.accepts;
  if (own !== undefined) return own;
  const def = schema.def as { innerType?: z.ZodType; in?: z.ZodType };
  const inner = def.innerType ?? def.in;
  return inner ? acceptsOf(inner) : undefined;
}
