import { AppError } from '../errors.ts';

/**
 * - `credentials`: the service refused our appname/appkey (`key err`).
 * - `invalid-request`: a value failed the service's format check (`check format fail <field> …`).
 * - `rejected`: any other refusal (`stat: false`), with the service's own words.
 * - `unavailable`: no usable answer: connection failure, timeout, HTTP 5xx, HTML or other non-JSON.
 * - `protocol`: JSON of a shape we do not understand (including a federation proxy's envelope).
 */
export type ApprovalServiceErrorKind =
  | 'credentials'
  | 'invalid-request'
  | 'rejected'
  | 'unavailable'
  | 'protocol';

export type Endpoint = 'start-approval' | 'approval-status' | 'department' | 'user-info';

export const ENDPOINT_ROUTES: Record<Endpoint, { method: 'GET' | 'POST'; path: string }> = {
  'start-approval': { method: 'POST', path: '/api/job/to3part/v1/approval' },
  'approval-status': { method: 'GET', path: '/api/job/to3part/v1/approval' },
  department: { method: 'GET', path: '/api/connector/to3part/v1/user/department' },
  'user-info': { method: 'GET', path: '/api/connector/to3part/v1/user/userinfo' },
};

export interface ApprovalServiceErrorDetails {
  kind: ApprovalServiceErrorKind;
  endpoint: Endpoint;
  /** The request field a format check or a database error concerns. */
  field?: string;
  /** What the service's database refused: a value too long, a character it cannot store, broken SQL. */
  problem?: 'too-long' | 'unstorable' | 'sql-syntax';
  /** With `too-long`: the characters the column holds. */
  limit?: number;
  /** The service's own code and text, when it sent them. */
  serviceCode?: number;
  serviceMessage?: string;
  /**
   * For a start request that failed after it was sent (timeout, 5xx): the service may have
   * created the approval anyway, and there is no way to ask it. The person must be told so.
   */
  maybeCreated?: boolean;
  cause?: unknown;
}

/** Any failure talking to the approval service. Its message never holds credentials or tokens. */
export class ApprovalServiceError extends AppError {
  readonly kind: ApprovalServiceErrorKind;
  readonly endpoint: Endpoint;
  readonly field: string | undefined;
  readonly problem: ApprovalServiceErrorDetails['problem'];
  readonly limit: number | undefined;
  readonly serviceCode: number | undefined;
  readonly serviceMessage: string | undefined;
  readonly maybeCreated: boolean;

  constructor(what: string, details: ApprovalServiceErrorDetails) {
    const route = ENDPOINT_ROUTES[details.endpoint];
    super(
      `approval_service_${details.kind}`,
      `Approval service, ${route.method} ${route.path}: ${what}`,
      {
        cause: details.cause,
      },
    );
    this.kind = details.kind;
    this.endpoint = details.endpoint;
    this.field = details.field;
    this.problem = details.problem;
    this.limit = details.limit;
    this.serviceCode = details.serviceCode;
    this.serviceMessage = details.serviceMessage;
    this.maybeCreated = details.maybeCreated ?? false;
  }
}
