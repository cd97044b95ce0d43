import type { WebClient } from '@slack/web-api';
import type { ChatPresence } from '../../approvals/away-rule.ts';
import { loginKey } from '../../approvals/person.ts';
import { settleWithin } from '../../settle-within.ts';
import { BoundedMap } from './bounded.ts';

/** What the app needs to know about a Slack user. */
export interface SlackPerson {
  id: string;
  name: string;
  /** Their e-mail, which is their login in the approval service; null when Slack does not share it. */
  email: string | null;
  locale: string;
  isBot: boolean;
  /** An admin or owner of the workspace (users.info `is_admin`, `is_owner`). */
  isWorkspaceAdmin: boolean;
  /** Their time zone (`tz`), for saying dates the way they read them. */
  timeZone: string | undefined;
  /** Deactivation and status, for the away rule (src/approvals/away-rule.ts). */
  presence: ChatPresence;
}

export interface SlackPeople {
  get(userId: string): Promise<SlackPerson>;
  /** The cached person, without a call; for choosing a language before the first call returns. */
  cached(userId: string): SlackPerson | undefined;
  /** The Slack user with this e-mail, or null when there is none (not on Slack, deactivated). */
  findByEmail(email: string): Promise<string | null>;
}

/**
 * The person's Slack locale, asked for (users.info) when not cached, but waiting at most `waitMs`:
 * for answers that must go out within Slack's 3 s (an acknowledgement, a trigger_id), where a
 * slow Slack may cost the language but never the answer. Undefined when it did not come in time.
 */
export async function localeWithin(
  people: Pick<SlackPeople, 'get' | 'cached'>,
  userId: string,
  waitMs: number,
): Promise<string | undefined> {
  return (await personWithin(people, userId, waitMs))?.locale;
}

/** The person (see localeWithin), waiting at most `waitMs`; undefined when not in time. */
export async function personWithin(
  people: Pick<SlackPeople, 'get' | 'cached'>,
  userId: string,
  waitMs: number,
): Promise<SlackPerson | undefined> {
  return (
    people.cached(userId) ??
    settleWithin(
      people.get(userId).catch(() => undefined),
      waitMs,
    )
  );
}

const TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 5000;

/**
 * Slack users by id and by e-mail, through users.info (with the locale) and users.lookupByEmail,
 * cached for ten minutes: both are rate-limited, and people do not change e-mail often. A status
 * (away or back) therefore shows in the form up to ten minutes late; users.info carries it
 * (`profile.status_*`, `deleted`, scope users:read), so it costs no extra call.
 */
export function createSlackPeople(client: WebClient, now: () => number = Date.now): SlackPeople {
  const byId = new BoundedMap<{ at: number; person: SlackPerson }>(MAX_ENTRIES);
  const byEmail = new BoundedMap<{ at: number; id: string | null }>(MAX_ENTRIES);
  const fresh = (at: number) => now() - at < TTL_MS;

  return {
    cached(userId) {
      return byId.get(userId)?.person;
    },

    async get(userId) {
      const hit = byId.get(userId);
      if (hit && fresh(hit.at)) return hit.person;
      const { user } = await client.users.info({ user: userId, include_locale: true });
      const person: SlackPerson = {
        id: userId,
        name: user?.profile?.display_name || user?.real_name || user?.name || userId,
        email: user?.profile?.email ?? null,
        locale: user?.locale ?? 'en-US',
        isBot: Boolean(user?.is_bot),
        isWorkspaceAdmin: user?.is_admin === true || user?.is_owner === true,
        timeZone: user?.tz || undefined,
        presence: {
          deactivated: user?.deleted === true,
          statusText: user?.profile?.status_text ?? '',
          statusEmoji: user?.profile?.status_emoji ?? '',
          // Seconds since the epoch; 0 means the status stays until changed.
          statusExpiresAt: user?.profile?.status_expiration
            ? new Date(user.profile.status_expiration * 1000)
            : null,
        },
      };
      byId.set(userId, { at: now(), person });
      return person;
    },

    async findByEmail(email) {
      // Folded as person.ts folds logins (ASCII only): a look-alike is another login.
      const key = loginKey(email);
      const hit = byEmail.get(key);
      if (hit && fresh(hit.at)) return hit.id;
      try {
        const { user } = await client.users.lookupByEmail({ email });
        const id = user?.id ?? null;
        byEmail.set(key, { at: now(), id });
        return id;
      } catch (error) {
        if ((error as { data?: { error?: string } }).data?.error === 'users_not_found') {
          byEmail.set(key, { at: now(), id: null });
          return null;
        }
        throw error;
      }
    },
  };
}
