import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// Checks manifest.yml against Slack's manifest rules and against what
// the code calls (every Web API method needs its scope).

interface Manifest {
  display_information: { name: string; description?: string };
  features: {
    app_home: {
      home_tab_enabled: boolean;
      messages_tab_enabled?: boolean;
      messages_tab_read_only_enabled?: boolean;
    };
    bot_user: { display_name: string };
    slash_commands: Array<{
      command: string;
      description: string;
      usage_hint?: string;
      should_escape?: boolean;
      url?: string;
    }>;
  };
  oauth_config: { scopes: { bot: string[] } };
  settings: {
    event_subscriptions: { bot_events: string[]; request_url?: string };
    interactivity: { is_enabled: boolean };
    socket_mode_enabled: boolean;
  };
}

const manifest = parse(
  readFileSync(new URL('../manifest.yml', import.meta.url), 'utf8'),
) as Manifest;

describe('manifest.yml', () => {
  it('names the app and its bot within Slack’s limits', () => {
    expect(manifest.display_information.name.length).toBeGreaterThan(0);
    expect(manifest.display_information.name.length).toBeLessThanOrEqual(35);
    expect(manifest.features.bot_user.display_name.length).toBeLessThanOrEqual(80);
  });

  it('declares /approve with a description and a usage hint, without a URL in Socket Mode', () => {
    const [approve] = manifest.features.slash_commands;
    expect(approve?.command).toBe('/approve');
    expect(approve?.command.length).toBeLessThanOrEqual(32);
    expect(approve?.description).toBeTruthy();
    expect(approve?.usage_hint).toContain('status');
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(approve?.url).toBeUndefined();
  });

  it('turns on interactivity, App Home and the app_home_opened event', () => {
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.features.app_home.home_tab_enabled).toBe(true);
    expect(manifest.settings.event_subscriptions.bot_events).toContain('app_home_opened');
  });

  it('asks for every scope the code needs, and users:read.email for e-mail addresses', () => {
    const scopes = manifest.oauth_config.scopes.bot;
    for (const scope of [
      'commands',
      'chat:write',
      'users:read',
      'users:read.email',
      'im:write',
      'channels:history',
      'im:history',
    ]) {
      expect(scopes).toContain(scope);
    }
    // Nothing reads group DMs; a scope the app does not use is one more thing to trust it with.
    expect(scopes).not.toContain('mpim:history');
  });

  it('keeps the Messages tab for the app’s DMs but read-only, since nothing answers typing there', () => {
    expect(manifest.features.app_home.messages_tab_enabled).toBe(true);
    expect(manifest.features.app_home.messages_tab_read_only_enabled).toBe(true);
  });
});
