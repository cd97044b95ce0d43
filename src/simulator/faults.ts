import { z } from 'zod';
import type { Endpoint } from '../approval-service/approval-service-error.ts';

export interface Faults {
  /** Added before answering, in ms. */
  latencyMs?: number;
  /** The connection is dropped without an answer. */
  outage?: boolean;
  /** nginx's HTML 502 page. */
  html502?: boolean;
  /** A JSON body cut in the middle. */
  malformedJson?: boolean;
  /** Answers wrapped as a federation proxy would: `{code:200,data}`. */
  federationProxy?: boolean;
  /** Status entries without `user_id`, as service versions before September 2023 send them. */
  legacyStatus?: boolean;
  /** The user-info endpoint fails as a broken single sign-on does. */
  ssoError?: boolean;
  /** The start endpoint dies with an uncaught exception (HTTP 500 with `exception`). */
  exception?: boolean;
}

export const ENDPOINTS: Endpoint[] = [
  'start-approval',
  'approval-status',
  'department',
  'user-info',
];

/** `POST /simulator/api/faults`: `{endpoint?: <endpoint>|"all", …faults}`. */
export const faultsRequest = z.object({
  endpoint: z.enum([...ENDPOINTS, 'all']).default('all'),
  latencyMs: z.number().int().min(0).max(600_000).optional(),
  outage: z.boolean().optional(),
  html502: z.boolean().optional(),
  malformedJson: z.boolean().optional(),
  federationProxy: z.boolean().optional(),
  legacyStatus: z.boolean().optional(),
  ssoError: z.boolean().optional(),
  exception: z.boolean().optional(),
});

/** The faults in force, per endpoint. */
export class FaultRegistry {
  private readonly faults = new Map<Endpoint, Faults>();

  set(endpoint: Endpoint | 'all', faults: Faults): void {
    for (const e of endpoint === 'all' ? ENDPOINTS : [endpoint]) this.faults.set(e, { ...faults });
  }

  clear(): void {
    this.faults.clear();
  }

  for(endpoint: Endpoint): Faults {
    return this.faults.get(endpoint) ?? {};
  }

  toJSON(): Record<string, Faults> {
    return Object.fromEntries(this.faults);
  }
}
