/** The parts of an interaction payload that say where it came from. */
export interface Origin {
  team?: { id?: string } | null;
  user?: { team_id?: string };
  view?: { team_id?: string | null };
  enterprise?: { id?: string } | null;
}

/**
 * The workspace an interaction came from, as recorded with what it starts. An app installed
 * org-wide on Enterprise Grid gets `team: null` (the request names the organization in
 * `enterprise`); the person's own workspace (`user.team_id`) or the view's then stands in, and
 * the organization's id when Slack names no workspace at all.
 */
export function teamIdOf(body: Origin): string {
  return body.team?.id ?? body.user?.team_id ?? body.view?.team_id ?? body.enterprise?.id ?? '';
}
