import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { emojiBySlackName } from '../approvals/slack-emoji.ts';
import { readBody } from '../simulator/http-replies.ts';
import type { Simulator } from '../simulator/simulator.ts';
import { CALLBACK } from '../slack/ids.ts';
import type { SlackRequester } from './slack-requests.ts';
import { routeSlackSide } from './web-api-server.ts';
import type { Workspace } from './workspace.ts';

/**
 * The sandbox's HTTP routes. The page plays the Slack client: what a person does there becomes
 * what Slack would send the app (signed requests through SlackRequester), and the app answers
 * through the Web API this server also serves. The app has no route of its own for the sandbox.
 *
 * - `/`, `/sandbox/*.js|css`   the page
 * - `/api/<method>`            the Slack Web API (SLACK_API_URL of the app)
 * - `/respond/…`               command response_urls
 * - `/sandbox/api/…`           the page's own calls: state, live events, typing, submitting
 * - `/simulator/api/…`         the simulator's admin routes (the "Approval service" panel)
 */
export function createSandboxRoutes(deps: {
  workspace: Workspace;
  simulator: Simulator;
  slack: () => SlackRequester;
}) {
  const { workspace, simulator } = deps;
  const page = new URL('./page/', import.meta.url);
  const assets: Record<string, string> = {
    '/': 'index.html',
    '/sandbox/app.js': 'app.js',
    '/sandbox/block-kit.js': 'block-kit.js',
    '/sandbox/styles.css': 'styles.css',
    '/sandbox/favicon.svg': 'favicon.svg',
  };
  const types: Record<string, string> = {
    html: 'text/html',
    js: 'text/javascript',
    css: 'text/css',
    svg: 'image/svg+xml',
  };
  // Slack's emoji names (the same data the app writes emoji with), for the page to draw them.
  const emoji = JSON.stringify(emojiBySlackName());

  function json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  }

  /** What one person sees: their channels and DMs with messages, open modals, Home. */
  function state(userId: string) {
    const people = [...workspace.users.values()].map((u) => ({
      id: u.id,
      name: u.realName,
      email: u.email,
      locale: u.locale,
      isBot: u.isBot,
      // Their Slack profile's zone: reminders wait for their working hours there.
      timeZone: u.timeZone ?? 'Asia/Shanghai',
    }));
    const channels = [...workspace.channels.values()]
      .filter((c) => c.kind === 'public' || c.members.has(userId))
      .filter((c) => c.kind !== 'im' || c.members.has(workspace.botUserId))
      .map((c) => ({
        id: c.id,
        name: c.kind === 'im' ? 'Approvals' : c.name,
        kind: c.kind,
        appIsMember: c.members.has(workspace.botUserId),
      }));
    const visible = new Set(channels.map((c) => c.id));
    const messages = workspace.messages
      .filter((m) => visible.has(m.channel) && (!m.ephemeralTo || m.ephemeralTo === userId))
      .map((m) => ({
        channel: m.channel,
        ts: m.ts,
        user: m.user,
        text: m.text,
        blocks: m.blocks,
        threadTs: m.threadTs ?? null,
        ephemeral: Boolean(m.ephemeralTo),
        edited: Boolean(m.edited),
        subtype: m.subtype ?? null,
      }));
    const views = [...workspace.views.values()]
      .filter((v) => v.user === userId)
      .map((v) => ({ id: v.id, view: v.view }));
    // Workflow runs of the app's step: the sandbox's "Run workflow" panel shows them all.
    const executions = [...workspace.executions.values()].map((e) => ({
      id: e.id,
      inputs: e.inputs,
      state: e.state,
      outputs: e.outputs ?? null,
      error: e.error ?? null,
      startedAt: e.startedAt,
    }));
    return {
      me: userId,
      executions,
      botUserId: workspace.botUserId,
      slackbotId: workspace.slackbotId,
      people,
      channels,
      messages,
      views,
      home: workspace.homes.get(userId) ?? null,
    };
  }

  async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
    const raw = await readBody(req);
    try {
      const parsed: unknown = raw ? JSON.parse(raw) : {};
      return typeof parsed === 'object' && parsed !== null
        ? (parsed as Record<string, unknown>)
        : {};
    } catch {
      return {};
    }
  }

  /** Why a POST to the page's API is not the page's own, or undefined when it is. */
  function foreignRequest(req: IncomingMessage): string | undefined {
    const host = String(req.headers.host ?? '');
    if (!/^(127\.0\.0\.1|localhost|\[::1\]):\d+$/.test(host)) return 'unexpected Host';
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) return 'cross-origin request';
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json'))
      return 'Content-Type must be application/json';
    return undefined;
  }

  /** Typing in the message box: a slash command goes to the app as Slack would send it. */
  async function message(b: Record<string, unknown>) {
    const user = String(b.user);
    const channel = String(b.channel);
    const text = String(b.text ?? '').trim();
    const threadTs = b.threadTs ? String(b.threadTs) : undefined;
    if (!text.startsWith('/')) {
      workspace.postAsUser(user, channel, text, threadTs);
      return { ok: true };
    }
    const [command = '', ...rest] = text.split(/\s+/);
    if (command === '/invite') return { ok: await invite(user, channel, rest.join(' ')) };
    if (command !== '/approve') {
      // Slack, not the app, answers a command no app in the workspace has.
      workspace.slackbotSays(
        user,
        channel,
        `\`${command}\` is not a valid command. In Slack, all messages that start with "/" are interpreted as commands; this workspace has /approve and /invite.`,
      );
      return { ok: false };
    }
    const response = await deps.slack().command(user, channel, rest.join(' '), command);
    // Slack shows a command's immediate answer to the person who typed it.
    if (response.json?.text || response.json?.blocks)
      workspace.respond(user, channel, response.json);
    if (response.status !== 200)
      workspace.slackbotSays(
        user,
        channel,
        `${command} failed with the error "dispatch_failed" (the app answered ${response.status}).`,
      );
    return { ok: response.status === 200 };
  }

  /** Slack's `/invite @name`: adds a person or the app to the channel it is typed in. */
  async function invite(user: string, channelId: string, who: string): Promise<boolean> {
    const channel = workspace.channels.get(channelId);
    const say = (text: string) => {
      workspace.slackbotSays(user, channelId, text);
      return false;
    };
    if (!channel || channel.kind === 'im') return say('You can only invite to a channel.');
    const name = who.replace(/^@/, '').trim().toLowerCase();
    if (!name) return say('Usage: `/invite @name`, for example `/invite @Approvals`.');
    const invited = [...workspace.users.values()].find(
      (u) =>
        u.id !== workspace.slackbotId &&
        [u.name, u.realName, u.email ?? ''].some((n) => n.toLowerCase() === name),
    );
    if (!invited) return say(`No one called ${who} is in this workspace.`);
    if (channel.members.has(invited.id))
      return say(`<@${invited.id}> is already in <#${channel.id}>.`);
    await deps.slack().invite(user, channel.id, invited.id);
    return true;
  }

  async function proxySimulator(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
  ): Promise<void> {
    const raw = await readBody(req);
    const upstream = await fetch(`${simulator.url}${path}`, {
      method: req.method ?? 'GET',
      headers: { 'content-type': 'application/json' },
      ...(raw ? { body: raw } : {}),
    });
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(await upstream.text());
  }

  return async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const path = url.pathname;
    const asset = assets[path];
    if (req.method === 'GET' && asset) {
      res.writeHead(200, {
        'content-type': `${types[asset.split('.').pop() ?? 'html']}; charset=utf-8`,
        'cache-control': 'no-store',
      });
      res.end(await readFile(new URL(asset, page)));
      return;
    }
    if (req.method === 'GET' && path === '/sandbox/emoji.json') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(emoji);
      return;
    }
    if (await routeSlackSide(workspace, req, res)) return;
    if (path.startsWith('/simulator/api/')) {
      const refused = req.method === 'GET' ? undefined : foreignRequest(req);
      if (refused) return json(res, 403, { error: refused });
      return proxySimulator(req, res, path);
    }
    if (path === '/sandbox/api/state' && req.method === 'GET')
      return json(res, 200, state(url.searchParams.get('user') ?? ''));
    if (path === '/sandbox/api/events' && req.method === 'GET') {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      res.write('retry: 1000\n\n');
      const stop = workspace.onChange((change) => res.write(`data: ${change}\n\n`));
      req.on('close', stop);
      return;
    }
    if (req.method !== 'POST') return json(res, 404, { error: 'not found' });
    // Only the page itself may drive the sandbox: JSON (which a cross-site form cannot send
    // without a preflight), from this origin, to this host (no DNS rebinding).
    const refused = foreignRequest(req);
    if (refused) return json(res, 403, { error: refused });
    const b = await body(req);
    if (path === '/sandbox/api/message') return json(res, 200, await message(b));
    if (path === '/sandbox/api/shortcut') {
      const user = String(b.user ?? '');
      // On a message ("⋯" menu) or from the ⚡ menu; the callback ids are the manifest's.
      const response = b.ts
        ? await deps
            .slack()
            .messageShortcut(user, String(b.channel ?? ''), String(b.ts), CALLBACK.messageShortcut)
        : await deps.slack().globalShortcut(user, CALLBACK.globalShortcut);
      return json(res, 200, { ok: response.status === 200 });
    }
    if (path === '/sandbox/api/workflow') {
      // Workflow Builder runs the app's step with what the panel's form holds.
      const inputs = Object.fromEntries(
        Object.entries((b.inputs ?? {}) as Record<string, unknown>).filter(([, v]) => v !== ''),
      );
      // Run from the panel by the person the page is playing: Workflow Builder names them in
      // the step's interactivity input, so a run for someone else asks that person first.
      const runBy = String(b.user ?? '');
      if (runBy) inputs.interactivity = workspace.interactivityOf(runBy);
      const { response, executionId } = await deps
        .slack()
        .functionExecuted(CALLBACK.workflowStep, inputs);
      return json(res, 200, { ok: response.status === 200, executionId });
    }
    if (path === '/sandbox/api/session') {
      workspace.forgetClient(String(b.user ?? ''));
      return json(res, 200, { ok: true });
    }
    const viewAction = /^\/sandbox\/api\/views\/(\w+)\/(submit|close|select|action)$/.exec(path);
    if (viewAction) {
      const [, viewId = '', action] = viewAction;
      if (action === 'select' || action === 'action') {
        // A pick in a dispatch_action input, or a button pressed in the modal, by the person the
        // view was opened for; Slack sends either at once, with what the fields hold.
        const stored = workspace.views.get(viewId);
        if (!stored) return json(res, 409, { ok: false, error: 'This form is no longer open.' });
        const actionId = String(b.actionId ?? '');
        const value = String(b.value ?? '');
        const inputs = (b.values ?? {}) as Record<string, string | undefined>;
        const slack = deps.slack();
        const response =
          action === 'action'
            ? await slack.blockAction(
                stored.user,
                { action_id: actionId, value },
                { viewId, inputs },
              )
            : elementType(stored.view, actionId) === 'static_select'
              ? await slack.selectOption(stored.user, viewId, actionId, value, inputs)
              : await slack.selectUser(stored.user, viewId, actionId, value, inputs);
        return json(res, 200, { ok: response.status === 200 });
      }
      if (action === 'close') {
        if (workspace.views.has(viewId)) await deps.slack().closeView(viewId);
        return json(res, 200, { ok: true });
      }
      // Already submitted and closed (a second click), or gone with a reload.
      if (!workspace.views.has(viewId))
        return json(res, 409, { ok: false, error: 'This form is no longer open.' });
      const result = await deps
        .slack()
        .submitView(viewId, (b.values ?? {}) as Record<string, string | undefined>);
      return json(res, 200, { ok: result.response.status === 200, errors: result.errors ?? null });
    }
    if (path === '/sandbox/api/home') {
      const response = await deps.slack().event({
        type: 'app_home_opened',
        user: String(b.user),
        channel: workspace.appDm(String(b.user)).id,
        tab: 'home',
      });
      return json(res, 200, { ok: response.status === 200 });
    }
    if (path === '/sandbox/api/action') {
      const response = await deps
        .slack()
        .blockAction(
          String(b.user),
          { action_id: String(b.actionId), value: String(b.value ?? '') },
          { channelId: String(b.channel ?? ''), messageTs: String(b.ts ?? '') },
        );
      return json(res, 200, { ok: response.status === 200 });
    }
    return json(res, 404, { error: 'not found' });
  };
}

/** The type of the input element `actionId` of a view (users_select, static_select, …). */
function elementType(view: Record<string, unknown>, actionId: string): string | undefined {
  const blocks = (view.blocks as Array<{ element?: { action_id?: string; type?: string } }>) ?? [];
  return blocks.find((b) => b.element?.action_id === actionId)?.element?.type;
}
