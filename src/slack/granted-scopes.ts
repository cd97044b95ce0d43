/**
 * What the app can do with the bot scopes it was granted. A workspace may install a leaner
 * manifest (deploy/slack/): the app then gives up what needs the missing scopes, and says so,
 * instead of failing at it.
 */

/**
 * The scopes the crash-recovery search reads history with, one per kind of conversation an
 * announcement goes to. Without all of them the search is not made at all: which kind a channel is
 * cannot be told from its id.
 */
export const HISTORY_SCOPES = ['channels:history', 'groups:history', 'im:history'] as const;

export interface Grants {
  /** Whether a post whose outcome is unknown is looked for before it is posted again. */
  searchesForEarlierPosts: boolean;
  /** The history scopes missing (empty when the search is made). */
  missingHistoryScopes: string[];
}

/** What the granted scopes allow; undefined scopes (not reported) allow everything. */
export function grantsOf(scopes: readonly string[] | undefined): Grants {
  const missing = scopes ? HISTORY_SCOPES.filter((s) => !scopes.includes(s)) : [];
  return { searchesForEarlierPosts: missing.length === 0, missingHistoryScopes: missing };
}

/** The one start-up line saying what is given up, when something is. */
export function givenUpLine(grants: Grants): string | undefined {
  if (grants.searchesForEarlierPosts) return undefined;
  return `without ${grants.missingHistoryScopes.join(', ')} the app cannot look for a post whose outcome is unknown (after a crash, a 5xx or a timeout mid-post): it posts it again, so such a fault may show an update twice`;
}
