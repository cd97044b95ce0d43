import type { TextLimits } from '../approvals/acceptable-text.ts';
import type { AccountLinking, AccountLinks } from '../approvals/account-links.ts';
import type { AnnouncementDispatcher } from '../approvals/announcement-dispatcher.ts';
import type { ApprovalRecord, ReportOptions, ReportRange } from '../approvals/approval-report.ts';
import type { ApprovalRepository } from '../approvals/approval-repository.ts';
import type { ApprovalService } from '../approvals/approval-types.ts';
import type { Delegations } from '../approvals/delegation.ts';
import type { TemplateStore } from '../approvals/request-templates.ts';
import type { StepConfirmations } from '../approvals/step-confirmation.ts';
import type { StepPlaces } from '../approvals/step-places.ts';
import type { ApprovalChains } from '../approvals/steps.ts';
import type { SubmissionGuard } from '../approvals/submission-guard.ts';
import type { Logger } from '../logger.ts';
import type { HomePublisher } from './delivery/home-publisher.ts';
import type { Access } from './people/access.ts';
import type { CachedMembership } from './people/conversation-members.ts';
import type { Identities } from './people/identities.ts';
import type { SlackPeople } from './people/slack-people.ts';
import type { StepConfirmer } from './workflow/step-confirmer.ts';

/** Everything the listeners use; each takes the narrowest Pick it needs. */
export interface SlackDeps {
  service: ApprovalService;
  store: ApprovalRepository;
  dispatcher: AnnouncementDispatcher;
  submissions: SubmissionGuard;
  /** What the service's columns hold (the note depends on the install). */
  textLimits: TextLimits;
  people: SlackPeople;
  identities: Identities;
  home: HomePublisher;
  links: AccountLinks;
  /** Who may link a person to a service login (ACCOUNT_LINKING). */
  accountLinking: AccountLinking;
  /** Channels' request templates (src/approvals/request-templates.ts). */
  templates: TemplateStore;
  /** Delegates while away (src/approvals/delegation.ts). */
  delegations: Delegations;
  /**
   * Requests in several steps (approvals/steps.ts): a step whose start was lost, started again;
   * where each listed approval stands (step-places.ts).
   */
  chains: Pick<ApprovalChains, 'ofApproval' | 'startAgain'> & StepPlaces;
  /** Who may see or act on an approval (src/approvals/access-policy.ts). */
  access: Access;
  /** What is kept of conversations' members, dropped when Slack says someone joined or left. */
  membership: Pick<CachedMembership, 'forget'>;
  /** Workflow steps waiting for their requester's confirmation. */
  confirmations: StepConfirmations;
  confirmer: StepConfirmer;
  logger: Logger;
  /** The approval service's web UI: its front page, and the approver's list (web-links.ts). */
  webUrl?: string;
  webListUrl?: string;
  now: () => Date;
  /** False once a stop leaves too little time to see a start through (see startTrackedApproval). */
  mayStart?: () => boolean;
  /** The approvals a report reads (a range, or those still open), and how it counts working hours. */
  reports?: {
    records: (range: ReportRange) => AsyncIterable<ApprovalRecord>;
    options: Pick<ReportOptions, 'hours' | 'zoneOf'>;
  };
}

/** What starting an approval needs, from the form's submission or from a workflow step. */
export type StartingDeps = Pick<
  SlackDeps,
  | 'mayStart'
  | 'people'
  | 'identities'
  | 'service'
  | 'store'
  | 'dispatcher'
  | 'submissions'
  | 'textLimits'
  | 'templates'
  | 'delegations'
  | 'logger'
  | 'webUrl'
  | 'now'
  | 'access'
>;
