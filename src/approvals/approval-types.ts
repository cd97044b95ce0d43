/** What the approval service decided about one approval. */
export type Decision = 'pending' | 'approved' | 'rejected';

/** The status of one approval as the service reports it. */
export interface ApprovalStatus {
  /** True once the decision is final (the service's `isend` = 1). */
  ended: boolean;
  decision: Decision;
  /** The approver's login; older service versions do not send it. */
  approver?: string;
  /** True when the service does not know the approval number (`data.data: null`). */
  unknown: boolean;
}

/** A person's place in the organisation, as the service's department lookup reports it. */
export interface Department {
  login: string;
  name: string;
  mobile: string;
  productLine: string;
  department: string;
  subDepartment: string;
  /** Leader logins, nearest first: sub-department, department, product line. Empty when unknown. */
  leaders: { subDepartment: string; department: string; productLine: string };
}

/** The person behind a session token of the service's web UI. */
export interface Profile {
  login: string;
  name: string;
  company: string;
  admin: boolean;
}

/** What it takes to start an approval. All text must already be acceptable to the service. */
export interface StartApprovalInput {
  requester: string;
  approver: string;
  title: string;
  note: string;
}

/** The approval service as the domain needs it; implemented over HTTP by the client. */
export interface ApprovalService {
  startApproval(input: StartApprovalInput): Promise<{ djbh: string }>;
  getStatus(djbh: string): Promise<ApprovalStatus>;
  getDepartment(email: string): Promise<Department>;
  getProfile(sessionToken: string): Promise<Profile>;
}

/** Words the service itself uses for each decision; shown beside our own. */
export const SERVICE_WORDS: Record<Decision, string> = {
  pending: '待办',
  approved: '同意',
  rejected: '不同意',
};
