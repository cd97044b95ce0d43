import { AppError } from '../errors.ts';
import type { Announcement, TrackedApproval } from './tracked-approval.ts';

/** Where a message was posted. */
export interface Posted {
  channel: string;
  ts: string;
}

/** Delivers announcements to the chat (Slack); the dispatcher decides what and when. */
export interface Announcer {
  /** Posts (or, for `parent-update`, edits) and says where. Throws AnnounceError on failure. */
  deliver(announcement: Announcement, approval: TrackedApproval): Promise<Posted>;
  /**
   * Looks for a post of this announcement made by an attempt that never recorded its success
   * (the process died between posting and writing it down).
   */
  findDelivered(announcement: Announcement, approval: TrackedApproval): Promise<Posted | undefined>;
}

export class AnnounceError extends AppError {
  constructor(
    message: string,
    /** True when trying again later may work (rate limit, network, Slack hiccup). */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(retryable ? 'announce_retryable' : 'announce_failed', message, options);
  }
}
