import { AppError } from '../errors.ts';
import type { Announcement, TrackedApproval } from './tracked-approval.ts';

/** Where a message was posted. Both empty when delivering meant posting nothing. */
export interface Posted {
  channel: string;
  ts: string;
  /** Slack said the approver cannot be reached (deactivated, not found); the requester was told. */
  approverUnreachable?: boolean;
  /**
   * The approver's chat account, when delivery looked it up because the approval recorded none
   * for an approver the service handed it to (handover.ts): recorded with the delivery.
   */
  approverChatId?: string;
}

/** Delivered by posting nothing (nobody to tell, nothing left to edit). */
export const NOTHING_POSTED: Posted = { channel: '', ts: '' };

/**
 * One delivery attempt's time. An attempt holds a lease; past its deadline it must not start
 * another call to the chat, so that a call still in flight ends before another attempt can take
 * over and look for what this one posted.
 */
export interface AttemptClock {
  /** Throws a retryable AnnounceError once the attempt's deadline has passed. */
  check(): void;
}

/** Delivers announcements to the chat (Slack); the dispatcher decides what and when. */
export interface Announcer {
  /** Posts (or edits) and says where. Throws AnnounceError on failure. */
  deliver(
    announcement: Announcement,
    approval: TrackedApproval,
    attempt: AttemptClock,
  ): Promise<Posted>;
  /**
   * Looks for a post of this announcement made by an earlier attempt whose outcome is unknown
   * (it died, timed out or got a 5xx after the chat had taken the post).
   */
  findDelivered(
    announcement: Announcement,
    approval: TrackedApproval,
    attempt: AttemptClock,
  ): Promise<Posted | undefined>;
  /** Side effects after a recorded delivery (Home tabs); best effort, outside the attempt. */
  afterDelivered?(announcement: Announcement, approval: TrackedApproval): Promise<void>;
  /**
   * Whether the chat accepts the app's credentials again (while delivery is paused):
   * `refused` while it still refuses them, `unknown` when the chat could not say (an outage).
   */
  checkCredentials(): Promise<'ok' | 'refused' | 'unknown'>;
}

export class AnnounceError extends AppError {
  /** True when trying again later may work (rate limit, network, the chat's hiccup). */
  readonly retryable: boolean;
  /** True when the chat may have taken the post although the call failed (timeout, 5xx). */
  readonly uncertain: boolean;
  /** The chat asked to wait this long (HTTP 429 Retry-After) before calling again. */
  readonly retryAfterMs: number | undefined;
  /**
   * The chat refused the app's own credentials (revoked, expired, deactivated): no announcement
   * can go out, so delivery pauses everywhere until they work again; nothing is failed for it.
   */
  readonly credentials: boolean;

  constructor(
    message: string,
    options: {
      retryable: boolean;
      uncertain?: boolean;
      retryAfterMs?: number;
      credentials?: boolean;
      cause?: unknown;
    },
  ) {
    super(
      options.credentials
        ? 'announce_credentials_refused'
        : options.retryAfterMs !== undefined
          ? 'announce_rate_limited'
          : options.retryable
            ? 'announce_retryable'
            : 'announce_failed',
      message,
      { cause: options.cause },
    );
    this.retryable = options.retryable;
    this.uncertain = options.uncertain ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.credentials = options.credentials ?? false;
  }
}
