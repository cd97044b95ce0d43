import { createHmac, randomBytes } from 'node:crypto';
import type { FunctionExecution, Workspace } from './workspace.ts';

/**
 * Plays Slack's side toward the app: builds requests shaped like Slack's documented payloads,
 * signs them with the signing secret (v0 HMAC-SHA256), posts them to /slack/events, and applies
 * what the app answers (a modal's errors, update or close) to the workspace.
 */

type Json = Record<string, unknown>;

export function signature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

export interface SlackResponse {
  status: number;
  body: string;
  json: Json | undefined;
}

export interface SlackRequesterOptions {
  workspace: Workspace;
  /** The app's events URL, e.g. http://127.0.0.1:3000/slack/events */
  eventsUrl: string;
  signingSecret: string;
  /** Origin of the server that takes response_url posts (see web-api-server.ts). */
  responseOrigin: string;
  now?: () => number;
}

export class SlackRequester {
  private readonly workspace: Workspace;
  private readonly eventsUrl: string;
  private readonly secret: string;
  private readonly now: () => number;
  private readonly responseOrigin: string;

  constructor(options: SlackRequesterOptions) {
    this.responseOrigin = options.responseOrigin;
    this.workspace = options.workspace;
    this.eventsUrl = options.eventsUrl;
    this.secret = options.signingSecret;
    this.now = options.now ?? Date.now;
  }

  /** Sends a raw body, signed (or with the given signature/timestamp, to test refusal). */
  async send(
    body: string,
    contentType: string,
    overrides: { timestamp?: number; signature?: string; headers?: Record<string, string> } = {},
  ): Promise<SlackResponse> {
    const timestamp = overrides.timestamp ?? Math.floor(this.now() / 1000);
    const response = await fetch(this.eventsUrl, {
      method: 'POST',
      headers: {
        'content-type': contentType,
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': overrides.signature ?? signature(this.secret, timestamp, body),
        ...overrides.headers,
      },
      body,
    });
    const text = await response.text();
    let json: Json | undefined;
    try {
      json = text ? (JSON.parse(text) as Json) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, body: text, json };
  }

  /** A slash command's fields as Slack sends them, with a fresh trigger id. */
  commandPayload(
    userId: string,
    channelId: string,
    text: string,
    command = '/approve',
  ): Record<string, string> {
    const user = this.workspace.users.get(userId);
    const channel = this.workspace.channels.get(channelId);
    return {
      token: 'gIkuvaNzQIHg97ATvDxqgjtO',
      team_id: this.workspace.teamId,
      team_domain: 'sandbox',
      channel_id: channelId,
      channel_name: channel?.kind === 'im' ? 'directmessage' : (channel?.name ?? 'unknown'),
      user_id: userId,
      user_name: user?.name ?? 'someone',
      command,
      text,
      api_app_id: 'A0APPROVALS',
      ...(this.workspace.enterprise
        ? {
            enterprise_id: this.workspace.enterprise.id,
            enterprise_name: this.workspace.enterprise.name,
          }
        : {}),
      is_enterprise_install: String(this.workspace.enterprise?.orgWideInstall ?? false),
      response_url: `${this.responseOrigin}/respond/${userId}/${channelId}`,
      trigger_id: this.workspace.issueTrigger(userId),
    };
  }

  /** A slash command as Slack posts it in HTTP mode (form-encoded). */
  async command(
    userId: string,
    channelId: string,
    text: string,
    command = '/approve',
  ): Promise<SlackResponse & { triggerId: string }> {
    const fields = this.commandPayload(userId, channelId, text, command);
    const form = new URLSearchParams(fields);
    return {
      ...(await this.send(form.toString(), 'application/x-www-form-urlencoded')),
      triggerId: fields.trigger_id ?? '',
    };
  }

  /** An interactivity payload (form field `payload` holding JSON). */
  interaction(payload: Json): Promise<SlackResponse> {
    const form = new URLSearchParams({ payload: JSON.stringify(payload) });
    return this.send(form.toString(), 'application/x-www-form-urlencoded');
  }

  /** The view_submission payload of an open modal with the given input values (by action_id). */
  viewSubmissionPayload(viewId: string, inputs: Record<string, string | undefined> = {}): Json {
    const stored = this.workspace.views.get(viewId);
    if (!stored) throw new Error(`no open view ${viewId}`);
    return {
      type: 'view_submission',
      ...this.envelope(stored.user),
      // Initial values stand for the inputs not given, as in Slack.
      view: {
        ...this.workspace.viewJson(stored),
        state: { values: stateValues(stored.view, inputs) },
      },
      response_urls: [],
    };
  }

  /** What Slack does with the app's answer to a view_submission: show errors, update or close. */
  applyViewResponse(viewId: string, answer: Json | undefined): Record<string, string> | undefined {
    const action = answer?.response_action;
    if (action === 'errors') return answer?.errors as Record<string, string>;
    if (action === 'update') this.workspace.replaceView(viewId, answer?.view as Json);
    else if (action !== 'push') this.workspace.closeView(viewId);
    return undefined;
  }

  /** Submits an open modal over HTTP, then applies the app's answer to the workspace like Slack does. */
  async submitView(
    viewId: string,
    inputs: Record<string, string | undefined> = {},
  ): Promise<{ response: SlackResponse; errors?: Record<string, string> }> {
    const response = await this.interaction(this.viewSubmissionPayload(viewId, inputs));
    if (response.status !== 200) return { response };
    const errors = this.applyViewResponse(viewId, response.json);
    return errors ? { response, errors } : { response };
  }

  /**
   * The person closes an open modal (Cancel, ×, Esc): Slack sends `view_closed` only for a view
   * opened with `notify_on_close`, and the view is gone either way.
   */
  async closeView(viewId: string): Promise<SlackResponse | undefined> {
    const stored = this.workspace.views.get(viewId);
    if (!stored) throw new Error(`no open view ${viewId}`);
    this.workspace.closeView(viewId);
    if (stored.view.notify_on_close !== true) return undefined;
    return this.interaction({
      type: 'view_closed',
      ...this.envelope(stored.user),
      view: this.workspace.viewJson(stored),
      is_cleared: false,
    });
  }

  /**
   * What every interaction payload carries: the team, the person, a fresh trigger id. An org-wide
   * install gets `team: null` and the organization in `enterprise` instead (see Enterprise).
   */
  private envelope(userId: string): Json {
    const enterprise = this.workspace.enterprise;
    return {
      team:
        enterprise?.orgWideInstall === true
          ? null
          : {
              id: this.workspace.teamId,
              domain: 'sandbox',
              ...(enterprise
                ? { enterprise_id: enterprise.id, enterprise_name: enterprise.name }
                : {}),
            },
      enterprise: enterprise ? { id: enterprise.id, name: enterprise.name } : null,
      user: {
        id: userId,
        username: this.workspace.users.get(userId)?.name ?? '',
        team_id: this.workspace.teamId,
      },
      api_app_id: 'A0APPROVALS',
      token: 'gIkuvaNzQIHg97ATvDxqgjtO',
      trigger_id: this.workspace.issueTrigger(userId),
      is_enterprise_install: enterprise?.orgWideInstall ?? false,
    };
  }

  /**
   * A button press in a message or view; in a view, Slack sends what its inputs hold at that
   * moment (`inputs` by action_id, initial values for the rest).
   */
  blockAction(
    userId: string,
    action: { action_id: string; value?: string; block_id?: string },
    where: {
      viewId?: string;
      channelId?: string;
      messageTs?: string;
      inputs?: Record<string, string | undefined>;
    } = {},
  ): Promise<SlackResponse> {
    const stored = where.viewId ? this.workspace.views.get(where.viewId) : undefined;
    const block = stored ? blockOfAction(stored.view, action.action_id) : undefined;
    return this.interaction({
      type: 'block_actions',
      ...this.envelope(userId),
      ...(stored
        ? {
            view: {
              ...this.workspace.viewJson(stored),
              state: { values: stateValues(stored.view, where.inputs ?? {}) },
            },
            container: { type: 'view', view_id: stored.id },
          }
        : {}),
      ...(where.channelId
        ? {
            channel: { id: where.channelId },
            container: {
              type: 'message',
              channel_id: where.channelId,
              message_ts: where.messageTs,
            },
            // A click on a message's button comes with a response_url for answering the clicker.
            response_url: `${this.responseOrigin}/respond/${userId}/${where.channelId}`,
          }
        : {}),
      actions: [
        {
          type: 'button',
          block_id: action.block_id ?? String(block?.block_id ?? 'actions'),
          action_id: action.action_id,
          value: action.value ?? '',
          action_ts: String(this.now() / 1000),
        },
      ],
    });
  }

  /**
   * Picking a person in a users_select of an open modal whose input has `dispatch_action`: Slack
   * sends block_actions at once, with the view and what its fields hold at that moment.
   */
  selectUser(
    userId: string,
    viewId: string,
    actionId: string,
    selected: string,
    inputs: Record<string, string | undefined> = {},
  ): Promise<SlackResponse> {
    const stored = this.workspace.views.get(viewId);
    if (!stored) throw new Error(`no open view ${viewId}`);
    const block = ((stored.view.blocks as Json[] | undefined) ?? []).find(
      (b) => (b.element as Json | undefined)?.action_id === actionId,
    );
    return this.interaction({
      type: 'block_actions',
      ...this.envelope(userId),
      view: {
        ...this.workspace.viewJson(stored),
        state: { values: stateValues(stored.view, { ...inputs, [actionId]: selected }) },
      },
      container: { type: 'view', view_id: stored.id },
      actions: [
        {
          type: 'users_select',
          block_id: String(block?.block_id ?? ''),
          action_id: actionId,
          selected_user: selected,
          action_ts: String(this.now() / 1000),
        },
      ],
    });
  }

  /**
   * Choosing an option of a static_select in an open modal whose input has `dispatch_action`:
   * Slack sends block_actions at once with the option chosen, the view, and its fields' values.
   */
  selectOption(
    userId: string,
    viewId: string,
    actionId: string,
    value: string,
    inputs: Record<string, string | undefined> = {},
  ): Promise<SlackResponse> {
    const stored = this.workspace.views.get(viewId);
    if (!stored) throw new Error(`no open view ${viewId}`);
    const block = blockOfAction(stored.view, actionId);
    const options = ((block?.element as Json | undefined)?.options as Json[] | undefined) ?? [];
    const option = options.find((o) => o.value === value);
    if (!option) throw new Error(`no option ${value} in ${actionId}`);
    return this.interaction({
      type: 'block_actions',
      ...this.envelope(userId),
      view: {
        ...this.workspace.viewJson(stored),
        state: { values: stateValues(stored.view, { ...inputs, [actionId]: value }) },
      },
      container: { type: 'view', view_id: stored.id },
      actions: [
        {
          type: 'static_select',
          block_id: String(block?.block_id ?? ''),
          action_id: actionId,
          selected_option: option,
          action_ts: String(this.now() / 1000),
        },
      ],
    });
  }

  /** A message's "⋯" menu shortcut on the message `messageTs` of a channel. */
  messageShortcut(userId: string, channelId: string, messageTs: string, callbackId: string) {
    const message = this.workspace.messages.find(
      (m) => m.channel === channelId && m.ts === messageTs,
    );
    if (!message) throw new Error(`no message ${messageTs} in ${channelId}`);
    const channel = this.workspace.channels.get(channelId);
    return this.interaction({
      type: 'message_action',
      ...this.envelope(userId),
      callback_id: callbackId,
      action_ts: String(this.now() / 1000),
      message_ts: message.ts,
      channel: { id: channelId, name: channel?.kind === 'im' ? 'directmessage' : channel?.name },
      message: {
        type: 'message',
        user: message.user,
        // As Slack's payload: a message the app posted carries its bot_id.
        ...(message.user === this.workspace.botUserId ? { bot_id: this.workspace.botId } : {}),
        text: message.text,
        ts: message.ts,
        ...(message.threadTs ? { thread_ts: message.threadTs } : {}),
      },
      response_url: `${this.responseOrigin}/respond/${userId}/${channelId}`,
    });
  }

  /** A global shortcut from the ⚡ menu. */
  globalShortcut(userId: string, callbackId: string) {
    return this.interaction({
      type: 'shortcut',
      ...this.envelope(userId),
      callback_id: callbackId,
      action_ts: String(this.now() / 1000),
    });
  }

  /**
   * Workflow Builder runs the app's custom step: a function_executed event carrying the step's
   * inputs, its execution id and its own short-lived token.
   */
  async functionExecuted(
    callbackId: string,
    inputs: Record<string, unknown>,
  ): Promise<{ response: SlackResponse; executionId: string }> {
    const execution = this.workspace.startFunction(callbackId, inputs);
    const response = await this.event(functionExecutedEvent(execution));
    return { response, executionId: execution.id };
  }

  /**
   * `/invite` as Slack runs it: the person (or the app) joins the channel, and, when the app is
   * in it by then, Slack tells the app with member_joined_channel.
   */
  async invite(byUserId: string, channelId: string, userId: string): Promise<void> {
    this.workspace.invite(byUserId, channelId, userId);
    const channel = this.workspace.channels.get(channelId);
    if (!channel?.members.has(this.workspace.botUserId)) return;
    await this.event({
      type: 'member_joined_channel',
      user: userId,
      channel: channelId,
      channel_type: channel.kind === 'public' ? 'C' : 'G',
      team: this.workspace.teamId,
      inviter: byUserId,
    });
  }

  /** An Events API callback (JSON), e.g. app_home_opened. */
  event(event: Json, headers: Record<string, string> = {}): Promise<SlackResponse> {
    const enterprise = this.workspace.enterprise;
    const orgWide = enterprise?.orgWideInstall === true;
    const body = JSON.stringify({
      token: 'gIkuvaNzQIHg97ATvDxqgjtO',
      team_id: this.workspace.teamId,
      ...(enterprise ? { enterprise_id: enterprise.id } : {}),
      api_app_id: 'A0APPROVALS',
      event: { event_ts: String(this.now() / 1000), ...event },
      type: 'event_callback',
      event_id: `Ev${this.now()}`,
      event_time: Math.floor(this.now() / 1000),
      // An org-wide install is authorized for the organization, not for one of its workspaces.
      authorizations: [
        {
          enterprise_id: enterprise?.id ?? null,
          team_id: orgWide ? null : this.workspace.teamId,
          user_id: this.workspace.botUserId,
          is_bot: true,
          is_enterprise_install: orgWide,
        },
      ],
      is_ext_shared_channel: false,
    });
    return this.send(body, 'application/json', { headers });
  }
}

/**
 * The `interactivity` Workflow Builder hands a step whose input is `{{data.interactivity}}`, for
 * a run `userId` started (a shortcut, a button): who it was, a secret and a pointer. The pointer
 * is not one the workspace issued, so it opens nothing, like a pointer past its few seconds;
 * `Workspace.interactivityOf` gives one that does.
 */
export function interactivityOf(userId: string): Json {
  return {
    interactor: { id: userId, secret: randomBytes(32).toString('base64url') },
    interactivity_pointer: `${Date.now()}.${randomBytes(6).toString('hex')}.${randomBytes(16).toString('hex')}`,
  };
}

/** The function_executed event of a step's run, as Slack sends it (the same for a retry). */
export function functionExecutedEvent(execution: FunctionExecution): Json {
  return {
    type: 'function_executed',
    function: {
      id: 'Fn0SANDBOX',
      callback_id: execution.callbackId,
      title: 'Request approval',
      type: 'app',
      app_id: 'A0APPROVALS',
      input_parameters: [],
      output_parameters: [],
      date_created: 1_700_000_000,
      date_updated: 1_700_000_000,
      date_deleted: 0,
    },
    inputs: execution.inputs,
    function_execution_id: execution.id,
    workflow_execution_id: `Wx${execution.id.slice(2)}`,
    bot_access_token: execution.token,
  };
}

/** The block holding the element `actionId` (an input's element, or one of an actions block's, or an accessory). */
function blockOfAction(view: Json, actionId: string): Json | undefined {
  return ((view.blocks as Json[] | undefined) ?? []).find(
    (b) =>
      (b.element as Json | undefined)?.action_id === actionId ||
      (b.accessory as Json | undefined)?.action_id === actionId ||
      ((b.elements as Json[] | undefined) ?? []).some((e) => e.action_id === actionId),
  );
}

/** Builds `view.state.values` from the view's input blocks, as Slack does on submit. */
export function stateValues(view: Json, inputs: Record<string, string | undefined>): Json {
  const values: Json = {};
  for (const block of (view.blocks as Json[] | undefined) ?? []) {
    if (block.type !== 'input') continue;
    const element = block.element as Json;
    const actionId = String(element.action_id ?? '');
    const given = actionId in inputs ? inputs[actionId] : undefined;
    const type = String(element.type);
    let value: Json;
    switch (type) {
      case 'users_select':
        value = { type, selected_user: given ?? element.initial_user ?? null };
        break;
      case 'datepicker':
        value = { type, selected_date: given ?? element.initial_date ?? null };
        break;
      case 'conversations_select':
        value = {
          type,
          selected_conversation: given || (element.initial_conversation ?? null),
        };
        break;
      case 'static_select':
      case 'external_select': {
        const options = (element.options as Json[] | undefined) ?? [];
        const chosen =
          given !== undefined ? options.find((o) => o.value === given) : element.initial_option;
        value = { type, selected_option: chosen ?? null };
        break;
      }
      default:
        value = { type, value: given ?? element.initial_value ?? null };
    }
    values[String(block.block_id)] = { [actionId]: value };
  }
  return values;
}
