import { z } from 'zod';

/**
 * What a signed request from Slack must look like before any listener sees it. Slack's own
 * payloads always pass; anything else (a `null` body, `actions: null`, an event that is a string,
 * a submission without its view) is refused here with a reason, instead of making a listener or
 * Bolt itself throw. Only the fields the app reads are checked; the rest passes through.
 */

const id = z.string().min(1);
const user = z.looseObject({ id });
const stateValue = z.looseObject({
  value: z.string().nullish(),
  selected_user: z.string().nullish(),
  selected_conversation: z.string().nullish(),
});
const view = z.looseObject({
  id,
  callback_id: z.string(),
  private_metadata: z.string().nullish(),
  state: z
    .looseObject({
      values: z
        .record(z.string(), z.record(z.string(), stateValue))
        .nullish()
        .transform((v) => v ?? {}),
    })
    .nullish()
    .transform((v) => v ?? { values: {} }),
});

const INTERACTIONS = {
  block_actions: z.looseObject({
    user,
    actions: z.array(z.looseObject({ action_id: z.string() })),
  }),
  view_submission: z.looseObject({ user, view }),
  view_closed: z.looseObject({ user, view }),
  shortcut: z.looseObject({ user, callback_id: z.string(), trigger_id: z.string() }),
  message_action: z.looseObject({ user, callback_id: z.string(), trigger_id: z.string() }),
  block_suggestion: z.looseObject({ user, action_id: z.string() }),
  event_callback: z.looseObject({ event: z.looseObject({ type: z.string() }) }),
} as const;

// Bolt reads these of a custom step's event before any listener could check them.
const functionExecuted = z.looseObject({
  event: z.looseObject({
    type: z.literal('function_executed'),
    function: z.looseObject({ callback_id: z.string() }),
    function_execution_id: id,
    inputs: z.record(z.string(), z.unknown()),
  }),
});

const command = z.looseObject({
  command: z.string().startsWith('/'),
  user_id: id,
  channel_id: id,
  trigger_id: z.string(),
  // Slack always sends it, empty when nothing was typed.
  text: z
    .string()
    .nullish()
    .transform((v) => v ?? ''),
});

export type ParsedRequest =
  /** For the app's listeners. */
  | { kind: 'dispatch'; body: Record<string, unknown> }
  /** Answered here: ssl_check probes, URL verification, and payload types the app has no use for. */
  | { kind: 'answer'; status: number; body?: unknown; note?: string }
  /** Malformed: 400, with the reason for the log. */
  | { kind: 'refuse'; reason: string };

/** Parses a (verified) request body as Slack sends it over HTTP: form-encoded, `payload=` JSON, or JSON. */
export function parseSlackRequest(raw: string, contentType: string): ParsedRequest {
  let body: unknown;
  try {
    if (contentType.startsWith('application/json')) {
      body = JSON.parse(raw);
    } else if (contentType.startsWith('application/x-www-form-urlencoded')) {
      const fields = Object.fromEntries(new URLSearchParams(raw));
      body = typeof fields.payload === 'string' ? JSON.parse(fields.payload) : fields;
    } else {
      return { kind: 'refuse', reason: `unexpected content type ${contentType || '(none)'}` };
    }
  } catch {
    return { kind: 'refuse', reason: 'the body is not valid JSON' };
  }
  return checkSlackBody(body);
}

/**
 * Checks a parsed body, from either transport (over Socket Mode the envelope's `payload` is the
 * same object HTTP mode would have parsed), against what the listeners read.
 */
export function checkSlackBody(body: unknown): ParsedRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { kind: 'refuse', reason: 'the body is not an object' };
  const fields = body as Record<string, unknown>;
  if (fields.ssl_check === '1') return { kind: 'answer', status: 200 };
  if (fields.type === 'url_verification')
    return typeof fields.challenge === 'string'
      ? { kind: 'answer', status: 200, body: { challenge: fields.challenge } }
      : { kind: 'refuse', reason: 'url_verification without a challenge' };
  if ('command' in fields) return checked(command, fields, 'command');
  const type = typeof fields.type === 'string' ? fields.type : undefined;
  const event = fields.event as { type?: unknown } | undefined;
  if (type === 'event_callback' && event?.type === 'function_executed')
    return checked(functionExecuted, fields, 'function_executed');
  // Own keys only: `in` would also find toString, constructor, __proto__ on the prototype.
  if (type && Object.hasOwn(INTERACTIONS, type))
    return checked(INTERACTIONS[type as keyof typeof INTERACTIONS], fields, type);
  // app_rate_limited and any type Slack may add: nothing to do, and Slack wants a 200.
  return { kind: 'answer', status: 200, note: `payload type ${type ?? '(none)'} is not handled` };
}

function checked(schema: z.ZodType, body: Record<string, unknown>, what: string): ParsedRequest {
  const result = schema.safeParse(body);
  if (result.success) return { kind: 'dispatch', body: result.data as Record<string, unknown> };
  const first = result.error.issues[0];
  return {
    kind: 'refuse',
    reason:
      `malformed ${what}: ${first?.path.join('.') || '(body)'} ${first?.message ?? ''}`.trim(),
  };
}

/**
 * The id Slack gives this request, for following it through the logs: the event's id, else the
 * modal's view id, else the trigger id (commands, shortcuts, buttons); what else is unique in it
 * for the rest. Undefined for bodies without any (ssl_check, url_verification).
 */
export function requestId(body: Record<string, unknown>): string | undefined {
  const view = body.view as { id?: unknown } | undefined;
  const candidates = [
    body.event_id,
    body.type === 'view_submission' || body.type === 'view_closed' ? view?.id : undefined,
    body.trigger_id,
    (body.event as { function_execution_id?: unknown } | undefined)?.function_execution_id,
    view?.id,
  ];
  const found = candidates.find((c) => typeof c === 'string' && c !== '');
  return typeof found === 'string' ? found : undefined;
}

/** What a request is, for logs: the command, the event type, or the payload type. */
export function requestKind(body: Record<string, unknown>): string {
  const event = body.event as { type?: unknown } | undefined;
  return String(body.command ?? event?.type ?? body.type ?? 'unknown');
}

/**
 * Whether an unsigned request is exactly Slack's `ssl_check` probe: form-encoded
 * `ssl_check=1&token=…` and nothing else. Slack sends it without X-Slack-Signature (bolt-js issue
 * #1397 quotes a captured one), so it is answered 200 before any verification; its fields are
 * only counted, never read further or logged. Anything else still has to carry a valid signature.
 */
export function isSslCheckProbe(raw: string, contentType: string): boolean {
  if (!contentType.startsWith('application/x-www-form-urlencoded') || raw.length > 512)
    return false;
  const fields = [...new URLSearchParams(raw)];
  const names = fields.map(([name]) => name).sort();
  return (
    names.length === 2 &&
    names[0] === 'ssl_check' &&
    names[1] === 'token' &&
    fields.some(([name, value]) => name === 'ssl_check' && value === '1')
  );
}
