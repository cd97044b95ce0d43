import emojis from 'emojibase-data/en/compact.json' with { type: 'json' };
import slackShortcodes from 'emojibase-data/en/shortcodes/iamcal.json' with { type: 'json' };

/**
 * Slack's names for emoji, so that an emoji typed in Slack reaches the service as the `:name:`
 * Slack itself writes and draws as that same emoji. The names are iamcal's emoji-data, the list
 * Slack's own emoji come from, as emojibase keeps it (`iamcal.json`); which emoji is which
 * (sequences, skin tones) is emojibase's Unicode data. A skin tone is written as Slack writes it:
 * the emoji's name, then `:skin-tone-2:` to `:skin-tone-6:` (`:+1::skin-tone-2:`), two tones in
 * one (`:handshake::skin-tone-2-4:`) for the sequences of two people.
 */

interface EmojiEntry {
  hexcode: string;
  unicode: string;
  skins?: EmojiEntry[];
}

const VARIATION_SELECTOR = /\uFE0F/g;
// Fitzpatrick modifiers U+1F3FB to U+1F3FF, which Slack names skin-tone-2 to skin-tone-6.
const TONES = ['1F3FB', '1F3FC', '1F3FD', '1F3FE', '1F3FF'];

const namesOf = slackShortcodes as Record<string, string | string[]>;
/** Slack's first name for a hexcode: the one it writes (`+1` rather than `thumbsup`). */
function slackName(hexcode: string): string | undefined {
  const names = namesOf[hexcode];
  return typeof names === 'string' ? names : names?.[0];
}

/** An emoji's skin tones as Slack writes them after its name ('' for none). */
function toneSuffix(hexcode: string): string {
  const tones = [...new Set(hexcode.split('-').filter((part) => TONES.includes(part)))].map(
    (tone) => TONES.indexOf(tone) + 2,
  );
  return tones.length === 0 ? '' : `:skin-tone-${tones.join('-')}:`;
}

/** Every emoji emojibase knows, without variation selectors (typed with or without them), → its Slack text. */
function slackTexts(): Map<string, string> {
  const texts = new Map<string, string>();
  for (const emoji of emojis as EmojiEntry[]) {
    const name = slackName(emoji.hexcode);
    if (!name) continue;
    texts.set(emoji.unicode.replace(VARIATION_SELECTOR, ''), `:${name}:`);
    for (const skin of emoji.skins ?? []) {
      const own = slackName(skin.hexcode);
      const text = own ? `:${own}:` : `:${name}:${toneSuffix(skin.hexcode)}`;
      texts.set(skin.unicode.replace(VARIATION_SELECTOR, ''), text);
    }
  }
  return texts;
}

let byEmoji: Map<string, string> | undefined;

/**
 * How Slack writes one emoji (a grapheme) in text: `:name:`, with its skin tones after it, or
 * undefined for what Slack has no name for.
 */
export function slackEmojiText(emoji: string): string | undefined {
  byEmoji ??= slackTexts();
  return byEmoji.get(emoji.replace(VARIATION_SELECTOR, ''));
}

/** Each name Slack writes (skin tones included) and the emoji it draws: for the sandbox's page. */
export function emojiBySlackName(): Record<string, string> {
  const drawn: Record<string, string> = {};
  for (const emoji of emojis as EmojiEntry[]) {
    const names = namesOf[emoji.hexcode];
    for (const name of typeof names === 'string' ? [names] : (names ?? []))
      drawn[name] = emoji.unicode;
  }
  TONES.forEach((tone, i) => {
    drawn[`skin-tone-${i + 2}`] = String.fromCodePoint(Number.parseInt(tone, 16));
  });
  return drawn;
}
