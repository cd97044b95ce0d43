import { type App, SocketModeReceiver, type SocketModeReceiverOptions } from '@slack/bolt';
import type { Logger } from '../../logger.ts';
import { ACK_DEADLINE_MS, dispatchAcknowledged } from './acknowledged-dispatch.ts';
import { checkSlackBody } from './slack-request.ts';

type ProcessEvent = App['processEvent'];
type ReceiverEvent = Parameters<ProcessEvent>[0];

/**
 * Bolt's SocketModeReceiver, with the one thing it leaves out: every envelope is acknowledged.
 * Bolt acknowledges events itself, but an interaction no listener takes (`view_closed`,
 * `block_suggestion`, `interactive_message`, `dialog_submission`, an action or shortcut of another
 * id) and a payload type it does not know are never acknowledged, so Slack retries them and the
 * person sees an error. Through Receiver.init, Bolt's seam between a receiver and the app, each
 * envelope goes the way an HTTP request does: checked against what the listeners read (one that
 * is not is acknowledged and dropped, with one line at warn), then to the listeners with exactly
 * one acknowledgement, by 2.5 s at the latest (dispatchAcknowledged, shared with HTTP mode).
 *
 * A stop must not close the socket under an envelope still waiting for its acknowledgement (a
 * submission's answer goes back over it, and Slack shows an error while the approval starts
 * anyway): `answered(deadline)` waits for those, as an HTTP server's close waits for responses.
 */
export class AcknowledgingSocketModeReceiver extends SocketModeReceiver {
  private readonly appLogger: Logger;
  private readonly ackDeadlineMs: number;
  /** Envelopes received and not yet acknowledged. */
  private readonly unanswered = new Set<Promise<void>>();

  constructor(options: SocketModeReceiverOptions & { appLogger: Logger; ackDeadlineMs?: number }) {
    const { appLogger, ackDeadlineMs, ...receiverOptions } = options;
    super(receiverOptions);
    this.appLogger = appLogger;
    this.ackDeadlineMs = ackDeadlineMs ?? ACK_DEADLINE_MS;
  }

  override init(app: App): void {
    // SocketModeReceiver calls nothing of the app but processEvent.
    const processEvent: ProcessEvent = (event) => this.deliver(app, event);
    super.init({ processEvent } as unknown as App);
  }

  /**
   * Waits until every envelope received so far (and any arriving meanwhile) has been
   * acknowledged, or until `deadline` (epoch ms); true when none is left unanswered.
   */
  async answered(deadline: number): Promise<boolean> {
    while (this.unanswered.size > 0 && Date.now() < deadline) {
      await Promise.race([
        Promise.all([...this.unanswered]),
        new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref()),
      ]);
    }
    return this.unanswered.size === 0;
  }

  private async deliver(app: App, event: ReceiverEvent): Promise<void> {
    let markAnswered = () => {};
    const pending = new Promise<void>((resolve) => {
      markAnswered = resolve;
    });
    this.unanswered.add(pending);
    void pending.then(() => this.unanswered.delete(pending));
    try {
      await this.dispatch(app, event, markAnswered);
    } finally {
      markAnswered();
    }
  }

  private async dispatch(app: App, event: ReceiverEvent, markAnswered: () => void): Promise<void> {
    const logger = this.appLogger;
    const acknowledge = async (response?: unknown) => {
      try {
        await event.ack(response);
      } finally {
        markAnswered();
      }
    };
    const checked = checkSlackBody(event.body);
    switch (checked.kind) {
      case 'refuse':
        logger.warn({ reason: checked.reason }, 'slack envelope refused');
        // Slack would only send it again: acknowledged, and nothing else done with it.
        return acknowledge().catch(() => undefined);
      case 'answer':
        if (checked.note) logger.info({ note: checked.note }, 'slack request ignored');
        return acknowledge(checked.body).catch(() => undefined);
      case 'dispatch':
        return dispatchAcknowledged(
          app,
          {
            body: checked.body,
            ...(event.retryNum !== undefined ? { retryNum: event.retryNum } : {}),
            ...(event.retryReason !== undefined ? { retryReason: event.retryReason } : {}),
            acknowledge,
          },
          { logger, deadlineMs: this.ackDeadlineMs },
        );
    }
  }
}
