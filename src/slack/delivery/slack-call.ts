import { AnnounceError } from '../../approvals/announcer.ts';
import {
  classifySlackError,
  MAY_HAVE_TAKEN_EFFECT,
  type OutboxMethod,
  type SlackErrorClass,
} from './slack-errors.ts';

/*
 * The outbox's Web API calls and their failures: each failure tagged with its method and class
 * from the error table (slack-errors.ts), and taken to the domain's AnnounceError.
 */

/** A failed Web API call, with the method it was, so the error table can be read. */
export class SlackCallError extends Error {
  /** Slack's error code (`channel_not_found`), when Slack answered one. */
  readonly code: string | undefined;
  readonly errorClass: SlackErrorClass | 'transport' | 'rate-limited';

  constructor(
    readonly method: OutboxMethod,
    override readonly cause: unknown,
  ) {
    const e = cause as { code?: string; data?: { error?: string } };
    const code = e.data?.error;
    super(
      `Slack ${method}: ${code ?? e.code ?? (cause instanceof Error ? cause.message : 'unknown error')}`,
    );
    this.code = code;
    this.errorClass =
      e.code === 'slack_webapi_rate_limited_error' || isUnreadRateLimit(cause)
        ? 'rate-limited'
        : code !== undefined
          ? classifySlackError(method, code)
          : 'transport';
  }
}

/**
 * A 429 whose Retry-After Slack's client could not read as seconds (an HTTP date, which RFC 9110
 * allows and a proxy in front of Slack may send): the client throws a plain error, which would
 * pass for a lost connection, so the outbox would search for a post that was never made and wait
 * out the commit horizon before posting. Its message is all there is to know it by.
 */
function isUnreadRateLimit(cause: unknown): boolean {
  return (
    cause instanceof Error &&
    cause.message.startsWith('Retry header did not contain a valid timeout')
  );
}

/** Runs one Web API call, tagging its failure with the method. */
export async function call<T>(method: OutboxMethod, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof SlackCallError || error instanceof AnnounceError) throw error;
    throw new SlackCallError(method, error);
  }
}

/** The class of a failed call in the error table; undefined for anything that was not a call. */
export function classOf(error: unknown): SlackCallError['errorClass'] | undefined {
  return error instanceof SlackCallError ? error.errorClass : undefined;
}

/**
 * How the dispatcher should take a failed call: a 429 waits for Retry-After; a timeout, a lost
 * connection or a 5xx may have posted (the next attempt looks first); Slack's answers as the error
 * table says (a fallback or a done that reaches here had nowhere else to go: given up).
 */
export function asAnnounceError(error: unknown): AnnounceError {
  if (error instanceof AnnounceError) return error;
  if (!(error instanceof SlackCallError))
    // Not Slack's answer at all (a bug, a failed lookup elsewhere): may pass, may have posted.
    return new AnnounceError(`Slack: ${error instanceof Error ? error.message : String(error)}`, {
      retryable: true,
      uncertain: true,
      cause: error,
    });
  const e = error.cause as { retryAfter?: number; statusCode?: number };
  const label = `Slack: ${error.code ?? (error.cause as { code?: string }).code ?? error.message}`;
  switch (error.errorClass) {
    case 'rate-limited':
      return new AnnounceError(label, {
        retryable: true,
        retryAfterMs: Math.max(1, e.retryAfter ?? 1) * 1000,
        cause: error,
      });
    case 'transport':
      return new AnnounceError(e.statusCode ? `${label} (HTTP ${e.statusCode})` : label, {
        retryable: true,
        uncertain: true,
        cause: error,
      });
    case 'pause':
      return new AnnounceError(label, { retryable: true, credentials: true, cause: error });
    case 'retry':
      return new AnnounceError(label, {
        retryable: true,
        uncertain: MAY_HAVE_TAKEN_EFFECT.has(error.code ?? ''),
        cause: error,
      });
    default:
      return new AnnounceError(label, { retryable: false, cause: error });
  }
}
