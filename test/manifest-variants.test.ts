import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// The leaner manifests in deploy/slack/ are manifest.yml minus exactly their parts: a change to
// manifest.yml reaches them (npm run manifests), and nothing else differs.

const root = new URL('..', import.meta.url).pathname;
const exec = promisify(execFile);
type Manifest = {
  oauth_config: { scopes: { bot: string[] } };
  settings: { event_subscriptions: { bot_events: string[] } } & Record<string, unknown>;
} & Record<string, unknown>;
const load = (file: string) => parse(readFileSync(`${root}${file}`, 'utf8')) as Manifest;

function without(
  manifest: Manifest,
  parts: { scopes?: string[]; events?: string[]; functions?: boolean },
): Manifest {
  const copy = structuredClone(manifest);
  copy.oauth_config.scopes.bot = copy.oauth_config.scopes.bot.filter(
    (s) => !parts.scopes?.includes(s),
  );
  copy.settings.event_subscriptions.bot_events =
    copy.settings.event_subscriptions.bot_events.filter((e) => !parts.events?.includes(e));
  if (parts.functions) {
    delete copy.functions;
    delete copy.settings.org_deploy_enabled;
    delete copy.settings.function_runtime;
  }
  return copy;
}

describe('the leaner manifests', () => {
  const manifest = load('manifest.yml');

  it('leaves out the history scopes, and nothing else', () => {
    const history = ['channels:history', 'groups:history', 'im:history'];
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(history));
    expect(load('deploy/slack/manifest.without-history.yml')).toEqual(
      without(manifest, { scopes: history }),
    );
  });

  it('leaves out the Workflow Builder step, and nothing else', () => {
    expect(manifest.functions).toBeDefined();
    const lean = load('deploy/slack/manifest.without-workflow-step.yml');
    expect(lean).toEqual(without(manifest, { events: ['function_executed'], functions: true }));
    expect(lean.functions).toBeUndefined();
  });

  it('are what npm run manifests makes from manifest.yml now', async () => {
    await expect(
      exec(process.execPath, ['scripts/manifest-variants.mjs', '--check'], { cwd: root }),
    ).resolves.toMatchObject({ stderr: '' });
  });
});
