import { z } from 'zod';
import { loadDirectory } from './directory.ts';
import { createSimulator, SIMULATOR_DEFAULTS } from './simulator.ts';

// `npm run simulator`: the approval-service simulator on its own, for development and demos.

const envSchema = z.object({
  SIMULATOR_PORT: z.coerce.number().int().min(0).max(65535).default(SIMULATOR_DEFAULTS.port),
  SIMULATOR_HOST: z.string().default('127.0.0.1'),
  APPROVAL_APP_NAME: z.string().default(SIMULATOR_DEFAULTS.appName),
  APPROVAL_APP_KEY: z.string().default(SIMULATOR_DEFAULTS.appKey),
  SIMULATOR_DIRECTORY: z.string().optional(),
  // 5000 plays an install that missed the schema update widening the note column.
  SIMULATOR_NOTE_LIMIT: z.coerce.number().int().min(1).default(20_000),
});

const nonEmpty = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== ''));
const parsed = envSchema.safeParse(nonEmpty);
if (!parsed.success) {
  console.error(
    `Simulator settings are invalid:\n  ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n  ')}`,
  );
  process.exit(1);
}
const env = parsed.data;
const simulator = await createSimulator({
  port: env.SIMULATOR_PORT,
  host: env.SIMULATOR_HOST,
  appName: env.APPROVAL_APP_NAME,
  appKey: env.APPROVAL_APP_KEY,
  directory: loadDirectory(env.SIMULATOR_DIRECTORY),
  noteLimit: env.SIMULATOR_NOTE_LIMIT,
});
process.stdout.write(
  `Approval-service simulator on ${simulator.url} (appname ${env.APPROVAL_APP_NAME}, ${simulator.people.length} people; admin routes under /simulator/api)\n`,
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void simulator.close().then(() => process.exit(0));
  });
}
