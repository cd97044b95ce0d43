/*
 * Where a person acts on an approval: the service's web UI. to3part returns no link to one
 * approval (its page, `#/quickapproval/<uuid>`, takes a per-approver id to3part never returns),
 * so the best an approver can be given is the page listing their own approvals, newest first:
 * in OpenC3's UI the route `#/approval/<treeid>`, which loads `GET /api/job/approval` (the
 * signed-in person's last 100 approvals, each with its number as `taskuuid`). A new approval is
 * on top there; the DM says which number to look for.
 */

/** The route of the approver's list on OpenC3's web UI (any tree id shows the same list). */
export const DEFAULT_WEB_LIST_PATH = '#/approval/4000000000';

/**
 * The page listing the signed-in person's approvals: APPROVAL_WEB_LIST_PATH resolved against
 * APPROVAL_WEB_URL as a link on that page would be (a `#…` route replaces the fragment, a `/…`
 * path starts at the host, anything else is relative to the folder). Undefined without a web UI.
 */
export function approverListUrl(web: { webUrl?: string; webListPath: string }): string | undefined {
  if (!web.webUrl) return undefined;
  return new URL(web.webListPath, web.webUrl).toString();
}
