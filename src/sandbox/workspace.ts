import { randomBytes } from 'node:crypto';
import { isUserId } from '../slack/ids.ts';
import { checkMessage, checkView } from './block-kit-limits.ts';

/**
 * An in-memory Slack workspace: people, channels, messages, threads, views and trigger ids.
 * It answers Web API methods as Slack does (`{ok:false, error}` with Slack's error codes), so the
 * app can be tested and tried locally; web-api-server.ts serves it over HTTP.
 */

type Json = Record<string, unknown>;

export interface SlackUser {
  id: string;
  name: string;
  realName: string;
  email: string | null;
  locale: string;
  isBot: boolean;
  /** The profile's status; `expiresAt` in ms, null when it stays until changed. */
  status?: { text: string; emoji: string; expiresAt: number | null };
  /** A deactivated account: users.info says `deleted: true`, users.lookupByEmail finds nobody. */
  deleted?: boolean;
  /** The profile's time zone (users.info's `tz`); Asia/Shanghai, the company's, when not set. */
  timeZone?: string;
  /** A workspace admin or owner (users.info `is_admin`; an owner is an admin too, `is_owner`). */
  role?: 'admin' | 'owner';
}

/** How a person's Slack profile starts out in the sandbox (the directory's `slack` field). */
export interface SandboxProfile {
  statusText?: string;
  statusEmoji?: string;
  /** The status clears this many days after the workspace starts; absent: it never does. */
  statusDays?: number;
  deactivated?: boolean;
  /** The person's time zone (IANA), when not the company's Asia/Shanghai. */
  timeZone?: string;
  /** A workspace admin or owner. */
  role?: 'admin' | 'owner';
}

export interface Channel {
  id: string;
  name: string;
  kind: 'public' | 'private' | 'im' | 'mpim';
  members: Set<string>;
}

export interface Message {
  channel: string;
  ts: string;
  user: string;
  text: string;
  blocks: Json[];
  threadTs?: string;
  metadata?: { event_type: string; event_payload: Json };
  edited?: boolean;
  /** Ephemeral messages are seen by one person and never stored by Slack. */
  ephemeralTo?: string;
  /** Slack's own notices in a channel, e.g. someone joining it. */
  subtype?: 'channel_join';
}

export interface View {
  id: string;
  hash: string;
  user: string;
  teamId: string;
  view: Json;
  rootViewId: string;
}

export interface Call {
  method: string;
  args: Json;
  at: number;
  response: Json;
  /** Which token the call came with: the bot's, or a workflow step's own. */
  auth?: 'bot' | 'workflow';
}

/** One run of a Workflow Builder custom step of the app. */
export interface FunctionExecution {
  id: string;
  callbackId: string;
  inputs: Json;
  /** The step's own token (`bot_access_token` of function_executed). */
  token: string;
  startedAt: number;
  state: 'running' | 'completed' | 'failed';
  outputs?: Json;
  error?: string;
  /** How many completion calls reached the step, including refused ones. */
  completionCalls: number;
}

export class SlackApiError extends Error {
  constructor(
    readonly error: string,
    readonly details?: string[],
  ) {
    super(error);
  }
}

/**
 * The Enterprise Grid organization the workspace belongs to. Its members have `W…` ids. An app
 * installed org-wide (`orgWideInstall`) gets payloads naming the organization instead of a
 * workspace: `team: null` and `enterprise` in interactions, `is_enterprise_install`, and
 * `authorizations[].team_id: null` in events.
 */
export interface Enterprise {
  id: string;
  name: string;
  orgWideInstall: boolean;
}

export interface WorkspaceOptions {
  teamId?: string;
  enterprise?: Enterprise;
  people: Array<{
    login: string;
    name: string;
    locale?: string;
    email?: string | null;
    slack?: SandboxProfile;
  }>;
  /** Channels to create; the app is a member of those with `appIsMember`. */
  channels?: Array<{ name: string; kind?: 'public' | 'private'; appIsMember?: boolean }>;
  now?: () => number;
  /**
   * The bot scopes the app was granted, as Slack reports them (the `x-oauth-scopes` header) and
   * enforces them on reading history (`missing_scope`). Unset: everything the manifest asks for.
   */
  grantedScopes?: readonly string[];
}

// The scope reading each kind of conversation's history needs.
const HISTORY_SCOPE: Record<string, string> = {
  public: 'channels:history',
  private: 'groups:history',
  im: 'im:history',
  mpim: 'mpim:history',
};

const TRIGGER_TTL_MS = 3000;
/**
 * How long a step's own token works. Slack documents no lifetime we could find; it is reported to
 * be refused (token_revoked) soon after the step's event was handled. The sandbox refuses it once
 * the step has ended or a minute after it started, so the app cannot come to rely on it.
 */
export const FUNCTION_TOKEN_TTL_MS = 60_000;

export class Workspace {
  readonly teamId: string;
  readonly grantedScopes: readonly string[] | undefined;
  readonly enterprise: Enterprise | undefined;
  readonly botUserId = 'U0APPROVALS';
  readonly botId = 'B0APPROVALS';
  /** Slack's own voice: it answers commands no app handles. */
  readonly slackbotId = 'USLACKBOT';
  readonly botToken = `xoxb-sandbox-${randomBytes(8).toString('hex')}`;
  /** The app-level token that apps.connections.open takes (Socket Mode). */
  readonly appToken = `xapp-sandbox-${randomBytes(8).toString('hex')}`;
  /** The WebSocket URL apps.connections.open hands out, when a Socket Mode server is running. */
  socketModeUrl: string | undefined;
  readonly users = new Map<string, SlackUser>();
  readonly channels = new Map<string, Channel>();
  readonly messages: Message[] = [];
  readonly views = new Map<string, View>();
  readonly homes = new Map<string, Json>();
  readonly calls: Call[] = [];
  readonly executions = new Map<string, FunctionExecution>();
  /** Called with every Web API call before it is answered; may throw a SlackApiError. */
  beforeCall: ((method: string, args: Json) => void | Promise<void>) | undefined;
  private readonly triggers = new Map<string, { user: string; issuedAt: number; used: boolean }>();
  private readonly failures: Array<{ method: string; error: string }> = [];
  private readonly listeners = new Set<(change: string) => void>();
  private readonly now: () => number;
  private lastTs = 0;
  private serial = 0;

  constructor(options: WorkspaceOptions) {
    this.teamId = options.teamId ?? 'T0SANDBOX';
    this.grantedScopes = options.grantedScopes;
    this.enterprise = options.enterprise;
    this.now = options.now ?? Date.now;
    this.users.set(this.botUserId, {
      id: this.botUserId,
      name: 'approvals',
      realName: 'Approvals',
      email: null,
      locale: 'en-US',
      isBot: true,
    });
    this.users.set(this.slackbotId, {
      id: this.slackbotId,
      name: 'slackbot',
      realName: 'Slackbot',
      email: null,
      locale: 'en-US',
      isBot: true,
    });
    for (const person of options.people) {
      const id = `${this.enterprise ? 'W' : 'U'}${this.id(8)}`;
      this.users.set(id, {
        id,
        name: person.login.split('@')[0] ?? person.login,
        realName: person.name,
        email: person.email === undefined ? person.login : person.email,
        locale: person.locale ?? 'en-US',
        isBot: false,
        ...(person.slack?.timeZone ? { timeZone: person.slack.timeZone } : {}),
        ...(person.slack?.statusText || person.slack?.statusEmoji
          ? {
              status: {
                text: person.slack.statusText ?? '',
                emoji: person.slack.statusEmoji ?? '',
                expiresAt:
                  person.slack.statusDays === undefined
                    ? null
                    : this.now() + person.slack.statusDays * 86_400_000,
              },
            }
          : {}),
        ...(person.slack?.deactivated ? { deleted: true } : {}),
        ...(person.slack?.role ? { role: person.slack.role } : {}),
      });
    }
    const everyone = [...this.users.values()].filter((u) => !u.isBot).map((u) => u.id);
    for (const channel of options.channels ?? [{ name: 'general', appIsMember: true }]) {
      const members = new Set(everyone);
      if (channel.appIsMember) members.add(this.botUserId);
      this.addChannel(channel.name, channel.kind ?? 'public', members);
    }
  }

  // ---- helpers for tests and the sandbox ----------------------------------------------------

  userByLogin(login: string): SlackUser {
    const user = [...this.users.values()].find(
      (u) => u.email === login || u.name === login.split('@')[0],
    );
    if (!user) throw new Error(`no Slack user for ${login}`);
    return user;
  }

  /** A person sets (or, with undefined, clears) their status, as in Slack's profile menu. */
  setStatus(userId: string, status: SlackUser['status']): void {
    const user = this.users.get(userId);
    if (!user) throw new Error(`no Slack user ${userId}`);
    if (status) user.status = status;
    else delete user.status;
  }

  channelByName(name: string): Channel {
    const channel = [...this.channels.values()].find((c) => c.name === name);
    if (!channel) throw new Error(`no channel #${name}`);
    return channel;
  }

  addChannel(name: string, kind: Channel['kind'], members: Set<string>): Channel {
    const prefix = kind === 'public' ? 'C' : kind === 'im' ? 'D' : 'G';
    const channel = { id: `${prefix}${this.id(8)}`, name, kind, members };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** The DM between the app and a person (Slack's "Messages" tab of the app). */
  appDm(userId: string): Channel {
    const existing = [...this.channels.values()].find(
      (c) => c.kind === 'im' && c.members.has(userId) && c.members.has(this.botUserId),
    );
    return existing ?? this.addChannel(`dm-${userId}`, 'im', new Set([userId, this.botUserId]));
  }

  /** A trigger id as Slack sends with a command or an interaction: valid for 3 s, once. */
  issueTrigger(userId: string): string {
    const id = `${this.now()}.${this.id(6)}.${randomBytes(8).toString('hex')}`;
    this.triggers.set(id, { user: userId, issuedAt: this.now(), used: false });
    return id;
  }

  /**
   * The `interactivity` Workflow Builder hands a step whose input is `{{data.interactivity}}`,
   * for a run `userId` started: its pointer opens one view within 3 s, like a trigger id.
   */
  interactivityOf(userId: string): Json {
    return {
      interactor: { id: userId, secret: randomBytes(32).toString('base64url') },
      interactivity_pointer: this.issueTrigger(userId),
    };
  }

  /** Workflow Builder runs the app's step `callbackId` with these inputs. */
  startFunction(callbackId: string, inputs: Json): FunctionExecution {
    const execution: FunctionExecution = {
      id: `Fx${this.id(10)}`,
      callbackId,
      inputs,
      token: `xwfp-sandbox-${randomBytes(8).toString('hex')}`,
      startedAt: this.now(),
      state: 'running',
      completionCalls: 0,
    };
    this.executions.set(execution.id, execution);
    this.emit('workflow');
    return execution;
  }

  /** Whose token this is for `method`, or undefined when Slack would refuse it. */
  authenticate(method: string, token: unknown): 'app' | 'bot' | 'workflow' | undefined {
    if (method === 'apps.connections.open') return token === this.appToken ? 'app' : undefined;
    if (token === this.botToken) return 'bot';
    const execution = [...this.executions.values()].find((e) => e.token === token);
    if (execution?.state === 'running' && this.now() - execution.startedAt <= FUNCTION_TOKEN_TTL_MS)
      return 'workflow';
    return undefined;
  }

  /** The next call of `method` fails with `error`. */
  failNext(method: string, error: string): void {
    this.failures.push({ method, error });
  }

  callsOf(method: string): Call[] {
    return this.calls.filter((c) => c.method === method);
  }

  /** Messages of a channel's history (not thread replies), oldest first. */
  history(channelId: string): Message[] {
    return this.messages.filter((m) => m.channel === channelId && !m.threadTs && !m.ephemeralTo);
  }

  replies(channelId: string, threadTs: string): Message[] {
    return this.messages.filter((m) => m.channel === channelId && m.threadTs === threadTs);
  }

  onChange(listener: (change: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * What a response_url receives (Bolt's respond()): an ephemeral message to the person who ran the
   * command, unless `response_type` is in_channel.
   */
  respond(userId: string, channelId: string, body: Json): void {
    const text = typeof body.text === 'string' ? body.text : '';
    const blocks = (body.blocks as Json[] | undefined) ?? [];
    const problems = checkMessage({ text, blocks });
    if (problems.length > 0) throw new SlackApiError('invalid_blocks', problems);
    const ephemeral = body.response_type !== 'in_channel';
    const message: Message = {
      channel: channelId,
      ts: this.nextTs(),
      user: this.botUserId,
      text,
      blocks,
      ...(ephemeral ? { ephemeralTo: userId } : {}),
    };
    this.messages.push(message);
    this.calls.push({ method: 'response_url', args: body, at: this.now(), response: { ok: true } });
    this.emit('message');
  }

  /** What Slack itself tells one person in a channel, e.g. about a command it does not know. */
  slackbotSays(userId: string, channelId: string, text: string): void {
    this.messages.push({
      channel: channelId,
      ts: this.nextTs(),
      user: this.slackbotId,
      text,
      blocks: [],
      ephemeralTo: userId,
    });
    this.emit('message');
  }

  /**
   * `/invite @someone` in a channel, as Slack runs it: the person (or the app) joins and the
   * channel shows that they joined.
   */
  invite(byUserId: string, channelId: string, userId: string): void {
    const channel = this.requireChannel(channelId);
    channel.members.add(userId);
    this.messages.push({
      channel: channel.id,
      ts: this.nextTs(),
      user: userId,
      text: `<@${userId}> has joined the channel. Added by <@${byUserId}>.`,
      blocks: [],
      subtype: 'channel_join',
    });
    this.emit('message');
  }

  /**
   * A Slack client reloaded: what lived only in it goes (its open modals, the ephemeral messages
   * it was shown), as in Slack, where neither survives a reload.
   */
  forgetClient(userId: string): void {
    for (const [id, view] of this.views) if (view.user === userId) this.views.delete(id);
    for (let i = this.messages.length - 1; i >= 0; i--)
      if (this.messages[i]?.ephemeralTo === userId) this.messages.splice(i, 1);
    this.emit('view');
  }

  /** Ephemeral messages a person sees in a channel, oldest first. */
  ephemeral(userId: string, channelId?: string): Message[] {
    return this.messages.filter(
      (m) => m.ephemeralTo === userId && (!channelId || m.channel === channelId),
    );
  }

  /** A person's own message, as typed in the sandbox. */
  postAsUser(userId: string, channelId: string, text: string, threadTs?: string): Message {
    const message: Message = {
      channel: channelId,
      ts: this.nextTs(),
      user: userId,
      text,
      blocks: [],
      ...(threadTs ? { threadTs } : {}),
    };
    this.messages.push(message);
    this.emit('message');
    return message;
  }

  // ---- the Web API ----------------------------------------------------------------------------

  async call(method: string, args: Json, auth?: 'bot' | 'workflow'): Promise<Json> {
    let response: Json;
    try {
      await this.beforeCall?.(method, args);
      const failure = this.failures.findIndex((f) => f.method === method);
      if (failure >= 0) {
        const [f] = this.failures.splice(failure, 1);
        throw new SlackApiError(f?.error ?? 'internal_error');
      }
      response = { ok: true, ...this.answer(method, args) };
    } catch (error) {
      if (!(error instanceof SlackApiError)) throw error;
      response = {
        ok: false,
        error: error.error,
        ...(error.details ? { response_metadata: { messages: error.details } } : {}),
      };
    }
    this.calls.push({ method, args, at: this.now(), response, ...(auth ? { auth } : {}) });
    return response;
  }

  private answer(method: string, a: Json): Json {
    switch (method) {
      case 'auth.test':
        return {
          url: 'https://sandbox.slack.local/',
          team: 'Sandbox',
          user: 'approvals',
          team_id: this.teamId,
          user_id: this.botUserId,
          bot_id: this.botId,
          ...(this.enterprise
            ? {
                enterprise_id: this.enterprise.id,
                is_enterprise_install: this.enterprise.orgWideInstall,
              }
            : {}),
        };
      case 'apps.connections.open':
        if (!this.socketModeUrl)
          throw new SlackApiError('internal_error', ['no Socket Mode server is running']);
        return { url: this.socketModeUrl };
      case 'views.open':
        return this.viewsOpen(a);
      case 'views.update':
        return this.viewsUpdate(a);
      case 'views.publish':
        return this.viewsPublish(a);
      case 'chat.postMessage':
        return this.postMessage(a);
      case 'chat.postEphemeral':
        return this.postEphemeral(a);
      case 'chat.update':
        return this.chatUpdate(a);
      case 'chat.getPermalink': {
        const channel = this.requireChannel(a.channel);
        const ts = String(a.message_ts ?? '');
        if (!this.messages.some((m) => m.channel === channel.id && m.ts === ts))
          throw new SlackApiError('message_not_found');
        return {
          channel: channel.id,
          permalink: `https://sandbox.slack.local/archives/${channel.id}/p${ts.replace('.', '')}`,
        };
      }
      case 'users.info':
        return {
          user: this.userJson(
            this.requireUser(a.user),
            a.include_locale === true || a.include_locale === 'true',
          ),
        };
      case 'users.lookupByEmail': {
        const user = [...this.users.values()].find(
          (u) =>
            u.email !== null &&
            !u.deleted &&
            u.email.toLowerCase() === String(a.email ?? '').toLowerCase(),
        );
        if (!user) throw new SlackApiError('users_not_found');
        return { user: this.userJson(user, false) };
      }
      case 'conversations.open': {
        const users = String(a.users ?? '')
          .split(',')
          .filter(Boolean);
        const [only] = users;
        if (users.length !== 1 || !only) throw new SlackApiError('not_implemented');
        this.requireUser(only);
        return { channel: { id: this.appDm(only).id } };
      }
      case 'conversations.history':
      case 'conversations.replies':
        return this.readConversation(method, a);
      case 'conversations.members':
        return this.conversationMembers(a);
      case 'conversations.info':
        return this.conversationInfo(a);
      case 'functions.completeSuccess':
      case 'functions.completeError':
        return this.completeFunction(method, a);
      default:
        throw new SlackApiError('unknown_method');
    }
  }

  private viewsOpen(a: Json): Json {
    // A workflow step opens views with the `interactivity_pointer` of its run, like a trigger id.
    const triggerId = String(a.trigger_id ?? a.interactivity_pointer ?? '');
    const trigger = this.triggers.get(triggerId);
    if (!trigger) throw new SlackApiError('invalid_trigger_id');
    if (trigger.used) throw new SlackApiError('exchanged_trigger_id');
    if (this.now() - trigger.issuedAt > TRIGGER_TTL_MS)
      throw new SlackApiError('expired_trigger_id');
    const view = this.parseView(a.view);
    trigger.used = true;
    const id = `V${this.id(10)}`;
    const stored: View = {
      id,
      hash: this.hash(),
      user: trigger.user,
      teamId: this.teamId,
      view,
      rootViewId: id,
    };
    this.views.set(id, stored);
    this.emit('view');
    return { view: this.viewJson(stored) };
  }

  private viewsUpdate(a: Json): Json {
    const stored = this.views.get(String(a.view_id ?? ''));
    if (!stored) throw new SlackApiError('not_found');
    if (a.hash !== undefined && a.hash !== stored.hash) throw new SlackApiError('hash_conflict');
    stored.view = this.parseView(a.view);
    stored.hash = this.hash();
    this.emit('view');
    return { view: this.viewJson(stored) };
  }

  /** What Slack does with `response_action: update` in a view_submission ack. */
  replaceView(viewId: string, view: Json): void {
    const stored = this.views.get(viewId);
    // The person closed it meanwhile; Slack drops the update.
    if (!stored) return;
    stored.view = this.parseView(view);
    stored.hash = this.hash();
    this.emit('view');
  }

  closeView(viewId: string): void {
    this.views.delete(viewId);
    this.emit('view');
  }

  private viewsPublish(a: Json): Json {
    const user = this.requireUser(a.user_id);
    const view = this.parseView(a.view);
    if (view.type !== 'home')
      throw new SlackApiError('invalid_arguments', ['views.publish takes a home view']);
    this.homes.set(user.id, view);
    this.emit('home');
    return { view: { id: `V${this.id(10)}`, ...view } };
  }

  private postMessage(a: Json): Json {
    const channel = this.writableChannel(a.channel);
    const { text, blocks } = this.messageContent(a);
    const threadTs = a.thread_ts ? String(a.thread_ts) : undefined;
    if (threadTs) {
      const parent = this.messages.find((m) => m.channel === channel.id && m.ts === threadTs);
      if (!parent) throw new SlackApiError('thread_not_found');
      // Slack threads hang off the parent; replying to a reply lands in the parent's thread.
      if (parent.threadTs && parent.threadTs !== parent.ts)
        throw new SlackApiError('cannot_reply_to_message');
    }
    const metadata = this.parseJson(a.metadata) as Message['metadata'];
    const message: Message = {
      channel: channel.id,
      ts: this.nextTs(),
      user: this.botUserId,
      text,
      blocks,
      ...(threadTs ? { threadTs } : {}),
      ...(metadata ? { metadata } : {}),
    };
    this.messages.push(message);
    this.emit('message');
    return { channel: channel.id, ts: message.ts, message: this.messageJson(message, true) };
  }

  private postEphemeral(a: Json): Json {
    const channel = this.writableChannel(a.channel);
    const user = this.requireUser(a.user);
    if (!channel.members.has(user.id)) throw new SlackApiError('user_not_in_channel');
    const { text, blocks } = this.messageContent(a);
    const message: Message = {
      channel: channel.id,
      ts: this.nextTs(),
      user: this.botUserId,
      text,
      blocks,
      ephemeralTo: user.id,
    };
    this.messages.push(message);
    this.emit('message');
    return { message_ts: message.ts };
  }

  private chatUpdate(a: Json): Json {
    const channel = this.requireChannel(a.channel);
    const message = this.messages.find(
      (m) => m.channel === channel.id && m.ts === String(a.ts ?? ''),
    );
    if (!message) throw new SlackApiError('message_not_found');
    if (message.user !== this.botUserId) throw new SlackApiError('cant_update_message');
    const { text, blocks } = this.messageContent(a);
    message.text = text;
    message.blocks = blocks;
    // As Slack documents for chat.update: a message updated with blocks shows no "edited" flag;
    // one updated with text alone does.
    if (!blocks || (Array.isArray(blocks) && blocks.length === 0)) message.edited = true;
    this.emit('message');
    return { channel: channel.id, ts: message.ts, text };
  }

  private completeFunction(method: string, a: Json): Json {
    const execution = this.executions.get(String(a.function_execution_id ?? ''));
    if (!execution) throw new SlackApiError('function_execution_not_found');
    execution.completionCalls++;
    if (execution.state !== 'running') throw new SlackApiError('execution_not_in_running_state');
    if (method === 'functions.completeSuccess') {
      const outputs = this.parseJson(a.outputs);
      if (typeof outputs !== 'object' || outputs === null)
        throw new SlackApiError('parameter_validation_failed', ['outputs must be an object']);
      execution.outputs = outputs as Json;
      execution.state = 'completed';
    } else {
      if (typeof a.error !== 'string' || !a.error)
        throw new SlackApiError('invalid_arguments', ['error is required']);
      execution.error = a.error;
      execution.state = 'failed';
    }
    this.emit('workflow');
    return {};
  }

  /**
   * Who is in a conversation, paged like Slack (a cursor, `limit` up to 1000). The app sees the
   * members of public channels, and of private channels and DMs only when it is in them.
   */
  private conversationMembers(a: Json): Json {
    const channel = this.requireChannel(a.channel);
    if (channel.kind !== 'public' && !channel.members.has(this.botUserId))
      throw new SlackApiError('channel_not_found');
    const limit = Number(a.limit ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new SlackApiError('invalid_limit');
    const start = a.cursor === undefined || a.cursor === '' ? 0 : Number(a.cursor);
    if (!Number.isInteger(start) || start < 0) throw new SlackApiError('invalid_cursor');
    const members = [...channel.members];
    const next = start + limit < members.length ? String(start + limit) : '';
    return {
      members: members.slice(start, start + limit),
      response_metadata: { next_cursor: next },
    };
  }

  /** As Slack: a private conversation the app is not in is not found; a DM has no name. */
  private conversationInfo(a: Json): Json {
    const channel = this.requireChannel(a.channel);
    if (channel.kind !== 'public' && !channel.members.has(this.botUserId))
      throw new SlackApiError('channel_not_found');
    const direct = channel.kind === 'im';
    return {
      channel: {
        id: channel.id,
        ...(direct ? {} : { name: channel.name }),
        is_channel: channel.kind === 'public',
        is_private: channel.kind !== 'public',
        is_im: direct,
      },
    };
  }

  private readConversation(method: string, a: Json): Json {
    const channel = this.requireChannel(a.channel);
    const needed = HISTORY_SCOPE[channel.kind] ?? 'channels:history';
    if (this.grantedScopes && !this.grantedScopes.includes(needed))
      throw new SlackApiError('missing_scope');
    if (!channel.members.has(this.botUserId)) throw new SlackApiError('not_in_channel');
    const withMetadata = a.include_all_metadata === true || a.include_all_metadata === 'true';
    const oldest = Number(a.oldest ?? 0);
    let found: Message[];
    if (method === 'conversations.replies') {
      const ts = String(a.ts ?? '');
      const parent = this.messages.find((m) => m.channel === channel.id && m.ts === ts);
      if (!parent) throw new SlackApiError('thread_not_found');
      found = [parent, ...this.replies(channel.id, ts)];
    } else {
      found = this.history(channel.id).reverse();
    }
    found = found.filter((m) => Number(m.ts) >= oldest && !m.ephemeralTo);
    // Slack pages with an opaque cursor; here it is the offset of the next page.
    const limit = Math.min(Number(a.limit ?? 100), 1000);
    const start = Number(a.cursor ?? 0) || 0;
    const more = found.length > start + limit;
    return {
      messages: found.slice(start, start + limit).map((m) => this.messageJson(m, withMetadata)),
      has_more: more,
      ...(more ? { response_metadata: { next_cursor: String(start + limit) } } : {}),
    };
  }

  // ---- shapes ---------------------------------------------------------------------------------

  private messageContent(a: Json): { text: string; blocks: Json[] } {
    const blocks = (this.parseJson(a.blocks) as Json[] | undefined) ?? [];
    const text = typeof a.text === 'string' ? a.text : '';
    if (!text && blocks.length === 0) throw new SlackApiError('no_text');
    const problems = checkMessage({ text, blocks });
    if (problems.length > 0) throw new SlackApiError('invalid_blocks', problems);
    return { text, blocks };
  }

  private parseView(raw: unknown): Json {
    const view = this.parseJson(raw) as Json | undefined;
    if (!view) throw new SlackApiError('invalid_arguments', ['view is required']);
    const problems = checkView(view);
    if (problems.length > 0) throw new SlackApiError('invalid_arguments', problems);
    return view;
  }

  viewJson(stored: View): Json {
    return {
      id: stored.id,
      team_id: stored.teamId,
      hash: stored.hash,
      root_view_id: stored.rootViewId,
      app_id: 'A0APPROVALS',
      bot_id: this.botId,
      state: { values: {} },
      private_metadata: '',
      callback_id: '',
      ...stored.view,
    };
  }

  messageJson(m: Message, withMetadata: boolean): Json {
    return {
      type: 'message',
      user: m.user,
      ...(m.user === this.botUserId ? { bot_id: this.botId } : {}),
      text: m.text,
      blocks: m.blocks,
      ts: m.ts,
      ...(m.threadTs ? { thread_ts: m.threadTs } : {}),
      ...(m.subtype ? { subtype: m.subtype } : {}),
      ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
    };
  }

  private userJson(u: SlackUser, withLocale: boolean): Json {
    return {
      id: u.id,
      team_id: this.teamId,
      name: u.name,
      real_name: u.realName,
      is_bot: u.isBot,
      deleted: u.deleted === true,
      // As Slack says it: an owner is an admin too.
      is_admin: u.role !== undefined,
      is_owner: u.role === 'owner',
      tz: u.timeZone ?? 'Asia/Shanghai',
      tz_offset: tzOffsetSeconds(u.timeZone ?? 'Asia/Shanghai', this.now()),
      ...(withLocale ? { locale: u.locale } : {}),
      ...(this.enterprise && !u.isBot
        ? {
            enterprise_user: {
              id: u.id,
              enterprise_id: this.enterprise.id,
              enterprise_name: this.enterprise.name,
              is_admin: false,
              is_owner: false,
              teams: [this.teamId],
            },
          }
        : {}),
      profile: {
        real_name: u.realName,
        display_name: u.realName,
        ...(u.email ? { email: u.email } : {}),
        status_text: u.status?.text ?? '',
        status_emoji: u.status?.emoji ?? '',
        // Seconds; 0 is a status that stays until changed.
        status_expiration: u.status?.expiresAt ? Math.floor(u.status.expiresAt / 1000) : 0,
      },
    };
  }

  // ---- lookups --------------------------------------------------------------------------------

  private requireUser(id: unknown): SlackUser {
    const user = this.users.get(String(id ?? ''));
    if (!user) throw new SlackApiError('user_not_found');
    return user;
  }

  private requireChannel(id: unknown): Channel {
    const channel = this.channels.get(String(id ?? ''));
    if (!channel) throw new SlackApiError('channel_not_found');
    return channel;
  }

  /** Where chat.postMessage may post: a user id means the app's DM with that person. */
  private writableChannel(id: unknown): Channel {
    const key = String(id ?? '');
    if (isUserId(key) && this.users.has(key)) return this.appDm(key);
    const channel = this.channels.get(key);
    // Private channels and other people's DMs are invisible to a non-member.
    if (!channel || (channel.kind !== 'public' && !channel.members.has(this.botUserId)))
      throw new SlackApiError('channel_not_found');
    if (!channel.members.has(this.botUserId)) throw new SlackApiError('not_in_channel');
    return channel;
  }

  private parseJson(raw: unknown): unknown {
    if (typeof raw !== 'string') return raw;
    try {
      return JSON.parse(raw);
    } catch {
      throw new SlackApiError('invalid_json');
    }
  }

  private nextTs(): string {
    const micros = Math.max(this.now() * 1000, this.lastTs + 1);
    this.lastTs = micros;
    return `${Math.floor(micros / 1_000_000)}.${String(micros % 1_000_000).padStart(6, '0')}`;
  }

  private id(length: number): string {
    this.serial++;
    return (this.serial.toString(36).toUpperCase() + randomBytes(8).toString('hex').toUpperCase())
      .slice(0, length)
      .padEnd(length, '0');
  }

  private hash(): string {
    return `${Math.floor(this.now() / 1000)}.${randomBytes(4).toString('hex')}`;
  }

  private emit(change: string): void {
    for (const listener of this.listeners) listener(change);
  }
}

/** A zone's offset from UTC in seconds at an instant, as users.info's `tz_offset` says it. */
function tzOffsetSeconds(timeZone: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(at));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return Math.round((wall - Math.floor(at / 1000) * 1000) / 1000);
}
