import { readFileSync } from 'node:fs';
import { z } from 'zod';

const login = z.string().regex(/^[a-zA-Z0-9.\-_@]+$/, 'a login is letters, digits and . - _ @');

export const personSchema = z.object({
  login,
  name: z.string().min(1),
  mobile: z.string().default(''),
  productLine: z.string().default(''),
  department: z.string().default(''),
  subDepartment: z.string().default(''),
  /** The one leader that current service versions report at every level. */
  leader: z.union([login, z.literal('')]).default(''),
  /** Per-level leaders, as older or customised installs report them; overrides `leader`. */
  leaders: z
    .object({ productLine: z.string(), department: z.string(), subDepartment: z.string() })
    .optional(),
  /** The `sid` session cookie of the service's web UI. */
  token: z.string().regex(/^[A-Za-z0-9]{64}$/, 'a session token is 64 letters and digits'),
  /** Only used by the sandbox, for the person's Slack profile. */
  locale: z.string().default('en-US'),
  title: z.string().default(''),
  /** Only used by the sandbox: the person's Slack status, or a deactivated account. */
  slack: z
    .object({
      statusText: z.string().max(100).optional(),
      statusEmoji: z.string().max(100).optional(),
      statusDays: z.number().positive().optional(),
      deactivated: z.boolean().optional(),
      /** Their Slack profile's time zone (IANA), when not the company's Asia/Shanghai. */
      timeZone: z.string().optional(),
      /** A workspace admin or owner (TEMPLATE_MANAGERS=admins lets them change templates). */
      role: z.enum(['admin', 'owner']).optional(),
    })
    .optional(),
});

export type Person = z.infer<typeof personSchema>;

export const directorySchema = z.object({ people: z.array(personSchema).min(1) });

const defaultDirectoryUrl = new URL('./default-directory.json', import.meta.url);

/** Reads a directory file (the shipped default when no path is given) and checks it. */
export function loadDirectory(path?: string): Person[] {
  const source = path ?? defaultDirectoryUrl;
  const raw: unknown = JSON.parse(readFileSync(source, 'utf8'));
  const result = directorySchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(
      `Simulator directory ${String(source)} is invalid:\n  ${problems.join('\n  ')}`,
    );
  }
  return result.data.people;
}
