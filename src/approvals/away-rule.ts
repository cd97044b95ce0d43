/**
 * When a chat profile says its person is away: the rule, as data. The chat adapter only reports
 * the profile (ChatPresence); what counts as away is decided here, so changing the words or emoji
 * touches this file alone.
 */

/** What a chat profile says about its person's availability. */
export interface ChatPresence {
  /** The account was deactivated (Slack: `deleted: true`). */
  deactivated: boolean;
  statusText: string;
  /** Emoji short name with colons, e.g. `:palm_tree:`; empty when none. */
  statusEmoji: string;
  /** When the status clears by itself; null when it never does (Slack: `status_expiration` 0). */
  statusExpiresAt: Date | null;
}

export type Away =
  | { reason: 'deactivated' }
  | { reason: 'status'; until: Date; text: string; emoji: string };

/**
 * Emoji that mean "not at work", from Slack's own preset statuses (🌴 Vacationing, 🤒 Out sick)
 * and what people commonly use for leave.
 */
export const AWAY_EMOJI: readonly string[] = [
  ':palm_tree:',
  ':beach_with_umbrella:',
  ':desert_island:',
  ':face_with_thermometer:',
  ':thermometer:',
  ':sneezing_face:',
  ':nauseated_face:',
  ':hospital:',
];

/**
 * Words in a status that mean "not at work", English and Chinese, matched case-insensitively
 * (the English ones as whole words). A business trip (出差, "travelling") is deliberately not here:
 * people on one usually still decide approvals from their phone.
 */
export const AWAY_WORDS: readonly string[] = [
  'holiday',
  'holidays',
  'vacation',
  'vacationing',
  'on leave',
  'parental leave',
  'annual leave',
  'sick',
  'out sick',
  'out of office',
  'out of the office',
  'ooo',
  'pto',
  '休假',
  '假期',
  '请假',
  '病假',
  '年假',
  '产假',
  '陪产假',
  '婚假',
  '不在办公室',
];

const wordPattern = new RegExp(
  AWAY_WORDS.map((w) =>
    /^[a-z ]+$/.test(w)
      ? `\\b${w.replace(/ /g, '\\s+')}\\b`
      : w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
  ).join('|'),
  'i',
);

/**
 * Whether a person is away at `now`: a deactivated account, or a status that expires in the future
 * and whose emoji or text is one of the above. A status without an expiry never counts: people
 * leave "🌴" up for months as decoration, and nothing says when they are back.
 */
export function awayOf(presence: ChatPresence, now: Date): Away | null {
  if (presence.deactivated) return { reason: 'deactivated' };
  const until = presence.statusExpiresAt;
  if (!until || until.getTime() <= now.getTime()) return null;
  const emoji = presence.statusEmoji.trim().toLowerCase();
  const saysAway = AWAY_EMOJI.includes(emoji) || wordPattern.test(presence.statusText);
  return saysAway
    ? { reason: 'status', until, text: presence.statusText, emoji: presence.statusEmoji }
    : null;
}
