import { describe, expect, it } from 'vitest';
import { templatesSubcommand } from '../../src/slack/listeners/commands/subcommands.ts';

// `/approve templates` called as Bolt calls it, with a database that fails: what the person is
// shown when the modal cannot be built (the listener's own contract, below the HTTP edge).

type Subcommand = typeof templatesSubcommand;

function setUp(verdictAfterMs: number) {
  const opened: unknown[] = [];
  const updated: unknown[] = [];
  const logged: string[] = [];
  const failing = () => Promise.reject(new Error('the database is unreachable'));
  const deps = {
    access: {
      templates: () =>
        new Promise((resolve) => setTimeout(() => resolve('allowed'), verdictAfterMs)),
    },
    people: {
      get: async (id: string) => ({ id, locale: 'en-US', timeZone: undefined }),
      cached: () => undefined,
    },
    templates: { list: failing, history: failing },
    logger: {
      warn: (_: unknown, msg: string) => logged.push(msg),
      error: (_: unknown, msg: string) => logged.push(msg),
      info: () => undefined,
    },
  } as unknown as Parameters<Subcommand>[0];
  const args = {
    ack: async () => undefined,
    respond: async () => undefined,
    command: { user_id: 'U0SAM', channel_id: 'C0GENERAL', trigger_id: 'trigger' },
    context: { botUserId: 'U0APP' },
    client: {
      views: {
        open: async (call: unknown) => {
          opened.push(call);
          return { ok: true, view: { id: 'V0MODAL', hash: 'h1' } };
        },
        update: async (call: unknown) => {
          updated.push(call);
          return { ok: true };
        },
      },
    },
  } as unknown as Parameters<Subcommand>[1];
  return { deps, args, opened, updated, logged };
}

const FAILED = 'Could not show this channel’s templates: something went wrong on our side.';

describe('/approve templates when the modal cannot be built', () => {
  it('replaces “Checking…” with what went wrong when the failure comes after the modal opened', async () => {
    const { deps, args, opened, updated, logged } = setUp(1700);
    await templatesSubcommand(deps, args);
    expect(JSON.stringify(opened)).toContain('Checking this channel');
    expect(updated).toHaveLength(1);
    expect(JSON.stringify(updated[0])).toContain(FAILED);
    expect(JSON.stringify(updated[0])).not.toContain('Checking this channel');
    expect(logged).toContain('could not prepare the templates modal');
  });

  it('opens the modal saying what went wrong when the failure comes at once', async () => {
    const { deps, args, opened, updated } = setUp(0);
    await templatesSubcommand(deps, args);
    expect(JSON.stringify(opened)).toContain(FAILED);
    expect(updated).toHaveLength(0);
  });
});
