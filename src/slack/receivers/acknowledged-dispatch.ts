import type { App } from '@slack/bolt';
import { describe } from '../../errors.ts';
import { withLogContext } from '../../log-context.ts';
import { type Logger, logFailure } from '../../logger.ts';
import { requestId, requestKind } from './slack-request.ts';

/** One request or envelope from Slack, on its way to the listeners. */
export interface Delivery {
  body: Record<string, unknown>;
  retryNum?: number;
  retryReason?: string;
  /** Sends Slack its acknowledgement (the HTTP answer, or the envelope's ack); called once. */
  acknowledge(response?: unknown): void | Promise<void>;
}

/**
 * Slack shows an error after 3 s without an acknowledgement (and retries events it thinks were
 * lost): whatever no listener acknowledged by then is acknowledged here, with room for the trip.
 */
export const ACK_DEADLINE_MS = 2500;
const FALLBACK_TEXT = 'Something went wrong on our side; please try again.';

/**
 * Hands one request to Bolt and makes sure Slack gets exactly one acknowledgement, over HTTP and
 * Socket Mode alike: the listener's own, else one as soon as the listeners are done (no listener
 * took it: `view_closed`, `block_suggestion`, an action or event the app has no use for), else one
 * at the deadline. A listener that throws before acknowledging is logged (a bug with its stack),
 * and a command gets a short apology instead of Slack's timeout.
 */
export function dispatchAcknowledged(
  app: App,
  delivery: Delivery,
  options: { logger: Logger; deadlineMs?: number },
): Promise<void> {
  // Every line written for this request, here (a late ack, a failed listener) and in its
  // listeners, carries the request's id.
  const id = requestId(delivery.body);
  return withLogContext(id ? { requestId: id } : {}, () => dispatch(app, delivery, options));
}

async function dispatch(
  app: App,
  delivery: Delivery,
  options: { logger: Logger; deadlineMs?: number },
): Promise<void> {
  const { body } = delivery;
  const { logger } = options;
  const deadlineMs = options.deadlineMs ?? ACK_DEADLINE_MS;
  let answered = false;
  const answer = async (response?: unknown): Promise<void> => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    try {
      await delivery.acknowledge(response);
    } catch (error) {
      // The connection went away meanwhile; Slack retries what it did not get an answer to.
      logger.warn({ error: describe(error), kind: requestKind(body) }, 'could not acknowledge');
    }
  };
  const timer = setTimeout(() => {
    if (answered) return;
    logger.warn(
      { kind: requestKind(body), ms: deadlineMs },
      'no listener acknowledged in time; answered 200',
    );
    void answer();
  }, deadlineMs);
  try {
    await app.processEvent({
      body,
      ...(delivery.retryNum !== undefined ? { retryNum: delivery.retryNum } : {}),
      ...(delivery.retryReason !== undefined ? { retryReason: delivery.retryReason } : {}),
      ack: async (response?: unknown) => {
        if (answered) throw new Error('this request was already acknowledged');
        await answer(response);
      },
    });
    // Nobody took it (no listener for this action, view or event): Slack still wants its answer.
    await answer();
  } catch (thrown) {
    // Bolt wraps a listener's error (slack_bolt_unknown_error); the original says what it was.
    const error = (thrown as { original?: unknown }).original ?? thrown;
    if (!answered) {
      // A bug with its stack; a routine failure (Slack or the service said no) in one line.
      logFailure(
        logger,
        error,
        { kind: requestKind(body) },
        'a listener failed before acknowledging',
      );
      await answer('command' in body ? { text: FALLBACK_TEXT } : undefined);
    } else {
      logFailure(logger, error, { kind: requestKind(body) }, 'a listener failed');
    }
  }
}
