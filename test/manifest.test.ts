import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CALLBACK } from '../src/slack/ids.ts';

// Checks manifest.yml against Slack's manifest rules and against what
// the code calls (every Web API method needs its scope).

interface Parameter {
  type: string;
  title: string;
  description?: string;
  enum?: string[];
}

interface Parameters {
  properties: Record<string, Parameter>;
  required?: string[];
}

interface Manifest {
  _metadata: { major_version: number };
  functions?: Record<
    string,
    {
      title: string;
      description: string;
      input_parameters: Parameters;
      output_parameters: Parameters;
    }
  >;
  display_information: { name: string; description?: string };
  features: {
    app_home: {
      home_tab_enabled: boolean;
      messages_tab_enabled?: boolean;
      messages_tab_read_only_enabled?: boolean;
    };
    bot_user: { display_name: string };
    shortcuts?: Array<{ name: string; type: string; callback_id: string; description: string }>;
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
    org_deploy_enabled?: boolean;
    function_runtime?: string;
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

  it('subscribes to members joining and leaving, so an invited app is seen at once', () => {
    const events = manifest.settings.event_subscriptions.bot_events;
    expect(events).toEqual(
      expect.arrayContaining(['member_joined_channel', 'member_left_channel']),
    );
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
      // conversations.members, for who may see an approval posted in a conversation.
      'channels:read',
      'groups:read',
      'im:read',
      'mpim:read',
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

  it('offers "Request approval" on messages and in the ⚡ menu, with the callback ids the app listens to', () => {
    const shortcuts = manifest.features.shortcuts ?? [];
    expect(shortcuts.map((s) => [s.type, s.callback_id])).toEqual([
      ['message', CALLBACK.messageShortcut],
      ['global', CALLBACK.globalShortcut],
    ]);
    for (const shortcut of shortcuts) {
      // Slack's limits: a name of 1–24 characters, a description of up to 80.
      expect(shortcut.name.length).toBeGreaterThan(0);
      expect(shortcut.name.length).toBeLessThanOrEqual(24);
      expect(shortcut.description.length).toBeLessThanOrEqual(80);
    }
    // Shortcuts need nothing beyond the `commands` scope.
    expect(manifest.oauth_config.scopes.bot).toContain('commands');
  });

  it('declares the Workflow Builder step with the inputs the app reads and the outputs it completes with', () => {
    expect(manifest._metadata.major_version).toBe(2);
    expect(manifest.settings.org_deploy_enabled).toBe(true);
    expect(manifest.settings.function_runtime).toBe('remote');
    expect(manifest.settings.event_subscriptions.bot_events).toContain('function_executed');
    const step = manifest.functions?.[CALLBACK.workflowStep];
    expect(step?.title).toBe('Request approval');
    const inputs = step?.input_parameters;
    expect(Object.keys(inputs?.properties ?? {}).sort()).toEqual(
      ['approver', 'channel', 'interactivity', 'later_steps', 'note', 'requester', 'title'].sort(),
    );
    // Who ran the workflow, compared with the requester before anything starts in their name.
    expect(inputs?.properties.interactivity?.type).toBe('slack#/types/interactivity');
    expect(inputs?.properties.requester?.type).toBe('slack#/types/user_id');
    expect(inputs?.properties.approver?.type).toBe('slack#/types/user_id');
    expect(inputs?.properties.channel?.type).toBe('slack#/types/channel_id');
    // Typed by the workflow's author: logins, people inserted from variables, leader rules.
    expect(inputs?.properties.later_steps?.type).toBe('string');
    expect(inputs?.required).toEqual(['requester', 'title', 'note']);
    const outputs = step?.output_parameters;
    expect(outputs?.properties.decision?.enum).toEqual(['approved', 'rejected', 'ended']);
    expect(outputs?.properties.decided_by?.type).toBe('slack#/types/user_id');
    expect(outputs?.properties.decided_at?.type).toBe('slack#/types/timestamp');
    // Each step's decider, only for a request with later steps.
    expect(outputs?.properties.step_deciders?.type).toBe('string');
    // decided_by is missing when the approver is not on Slack, so it cannot be required.
    expect(outputs?.required).toEqual(['approval_number', 'decision', 'decided_at']);
  });
});
