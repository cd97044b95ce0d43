import type { AnnouncementDispatcher } from '../approvals/announcement-dispatcher.ts';
import type { ApprovalStore } from '../approvals/approval-store.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import type { Logger } from '../logger.ts';
import type { SlackPeople } from './slack-people.ts';

/** Everything the listeners use; each takes the narrowest Pick it needs. */
export interface SlackDeps {
  service: ApprovalService;
  store: ApprovalStore;
  dispatcher: AnnouncementDispatcher;
  people: SlackPeople;
  logger: Logger;
  webUrl?: string;
  now: () => Date;
}
