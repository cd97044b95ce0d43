import { type FaultRegistry, faultsRequest } from './faults.ts';
import { Reply } from './http-replies.ts';
import type { SimulatorState } from './simulator-state.ts';

/**
 * The simulator's own routes under /simulator/api, which tools, tests and the sandbox rely on:
 * keep them stable.
 * - GET  /simulator/api/directory                  the people, with their session tokens
 * - POST /simulator/api/people/{login}/logout      a new session token; the old one is cached a minute
 * - GET  /simulator/api/approvals                  every approval, newest first
 * - POST /simulator/api/approvals/{djbh}/decision  {"decision":"agree"|"refuse"}, as the approver
 * - GET|POST|DELETE /simulator/api/faults          latency, outages, HTML 502s, malformed JSON, …
 */
export function createAdminRoutes(state: SimulatorState, faults: FaultRegistry) {
  return (method: string, path: string, body: Record<string, unknown>): Reply => {
    if (method === 'GET' && path === '/simulator/api/directory')
      return new Reply(200, { people: state.people });
    const logoutPath = /^\/simulator\/api\/people\/([^/]+)\/logout$/.exec(path);
    if (method === 'POST' && logoutPath) {
      const person = state.logout(decodeURIComponent(logoutPath[1] ?? ''));
      return person ? new Reply(200, { person }) : new Reply(404, { error: 'no such person' });
    }
    if (method === 'GET' && path === '/simulator/api/approvals')
      return new Reply(200, { approvals: state.list().reverse() });
    const decisionPath = /^\/simulator\/api\/approvals\/([^/]+)\/decision$/.exec(path);
    if (method === 'POST' && decisionPath) {
      const decision = body.decision;
      if (decision !== 'agree' && decision !== 'refuse')
        return new Reply(400, { error: 'decision must be "agree" or "refuse"' });
      const approval = state.decide(decodeURIComponent(decisionPath[1] ?? ''), decision);
      return approval
        ? new Reply(200, { approval })
        : new Reply(404, { error: 'no such approval' });
    }
    if (path === '/simulator/api/faults') {
      if (method === 'GET') return new Reply(200, { faults });
      if (method === 'DELETE') {
        faults.clear();
        return new Reply(200, { faults });
      }
      if (method === 'POST') {
        const parsed = faultsRequest.safeParse(body);
        if (!parsed.success) return new Reply(400, { error: parsed.error.message });
        const { endpoint, ...set } = parsed.data;
        faults.set(endpoint, set);
        return new Reply(200, { faults });
      }
    }
    return new Reply(404, { error: `no admin route ${method} ${path}` });
  };
}
