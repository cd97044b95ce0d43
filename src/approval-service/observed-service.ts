import type { ApprovalService } from '../approvals/approval-types.ts';
import { ApprovalServiceError, type Endpoint } from './approval-service-error.ts';

const ENDPOINTS: Record<keyof ApprovalService, Endpoint> = {
  startApproval: 'start-approval',
  getStatus: 'approval-status',
  getDepartment: 'department',
  getProfile: 'user-info',
};

/**
 * The same service, telling `observe` of each call's endpoint, outcome (`ok` or the error's kind)
 * and duration: for metrics, and for readiness (a recent `ok` proves the service answers and
 * takes our credentials).
 */
export function observeService(
  service: ApprovalService,
  observe: (endpoint: Endpoint, outcome: string, ms: number) => void,
): ApprovalService {
  const wrap =
    <A extends unknown[], R>(name: keyof ApprovalService, call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      try {
        const result = await call(...args);
        observe(ENDPOINTS[name], 'ok', performance.now() - started);
        return result;
      } catch (error) {
        const outcome = error instanceof ApprovalServiceError ? error.kind : 'error';
        observe(ENDPOINTS[name], outcome, performance.now() - started);
        throw error;
      }
    };
  return {
    startApproval: wrap('startApproval', (input) => service.startApproval(input)),
    getStatus: wrap('getStatus', (djbh) => service.getStatus(djbh)),
    getDepartment: wrap('getDepartment', (email) => service.getDepartment(email)),
    getProfile: wrap('getProfile', (token) => service.getProfile(token)),
  };
}
