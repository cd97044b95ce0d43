import emojis from 'emojibase-data/en/compact.json' with { type: 'json' };
import slackShortcodes from 'emojibase-data/en/shortcodes/iamcal.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';
import { adaptText } from '../../src/approvals/acceptable-text.ts';
import { emojiBySlackName } from '../../src/approvals/slack-emoji.ts';

// Every emoji a person can type reaches the service as the name Slack writes for it, and that name
// leads back to that same emoji: the whole of emojibase's Unicode data (skin tones included),
// checked against Slack's names (iamcal's list, as emojibase keeps it).

interface EmojiEntry {
  hexcode: string;
  unicode: string;
  label: string;
  skins?: EmojiEntry[];
}

const astral = /[\u{10000}-\u{10FFFF}]/u;
const TONES = ['1F3FB', '1F3FC', '1F3FD', '1F3FE', '1F3FF'];
const hexcodeOfName = new Map<string, string>();
for (const [hexcode, names] of Object.entries(slackShortcodes as Record<string, string | string[]>))
  for (const name of typeof names === 'string' ? [names] : names) hexcodeOfName.set(name, hexcode);
const tonesOf = (hexcode: string) =>
  [...new Set(hexcode.split('-').filter((part) => TONES.includes(part)))].map(
    (tone) => TONES.indexOf(tone) + 2,
  );

/** Each emoji the service cannot store as it is (outside the BMP), with the emoji it is a skin of. */
const typed = (emojis as EmojiEntry[]).flatMap((emoji) =>
  [emoji, ...(emoji.skins ?? [])]
    .filter((variant) => astral.test(variant.unicode))
    .map((variant) => ({ variant, base: emoji })),
);

/** What Slack's text names: the emoji's hexcode and its skin tones, or undefined if not a name. */
function readBack(text: string): { hexcode: string; tones: number[] } | undefined {
  const match = /^:([a-z0-9_+-]+):(?::skin-tone-(\d(?:-\d)?):)?$/.exec(text);
  const hexcode = match?.[1] ? hexcodeOfName.get(match[1]) : undefined;
  if (!match || !hexcode) return undefined;
  return { hexcode, tones: match[2] ? match[2].split('-').map(Number) : [] };
}

describe('emoji as Slack writes them', () => {
  it('turns every emoji Slack has a name for into that name, which leads back to the same emoji', () => {
    const seen = new Map<string, string>();
    let named = 0;
    for (const { variant, base } of typed) {
      const { text, changes } = adaptText(variant.unicode);
      if (!slackShortcodes[base.hexcode as keyof typeof slackShortcodes]) continue;
      named++;
      expect(changes, variant.label).toEqual(['emoji']);
      const back = readBack(text);
      expect(back, `${variant.label}: ${text}`).toEqual({
        hexcode: base.hexcode,
        // The modifiers alone (🏻, `:skin-tone-2:`) are emoji of their own, not a skin of one.
        tones: variant === base ? [] : tonesOf(variant.hexcode),
      });
      // No two emoji written alike: the name tells which one it was.
      expect(seen.get(text), `${variant.label} and ${seen.get(text)}: ${text}`).toBeUndefined();
      seen.set(text, variant.label);
      // Typed with or without the emoji presentation selector, as keyboards differ.
      expect(adaptText(variant.unicode.replaceAll('\uFE0F', '')).text).toBe(text);
    }
    // The whole set, not a sample: every emoji outside the BMP that Slack has a name for.
    expect(named).toBeGreaterThan(3_700);
  });

  it('writes □ only for what Slack has no name for (letters of flags, emoji newer than its list)', () => {
    const nameless = typed.filter(
      ({ base }) => !slackShortcodes[base.hexcode as keyof typeof slackShortcodes],
    );
    for (const { variant } of nameless)
      expect(adaptText(variant.unicode), variant.label).toEqual({
        text: '□',
        changes: ['unsupported-character'],
      });
    expect(nameless.length).toBeLessThan(100);
  });

  it('gives the sandbox’s page each name with the emoji it draws, skin tones included', () => {
    const drawn = emojiBySlackName();
    expect(drawn['+1']).toBe('👍️');
    expect(drawn.thumbsup).toBe('👍️');
    expect(`${drawn['+1']}${drawn['skin-tone-4']}`.replace('\uFE0F', '')).toBe('👍🏽');
    expect(drawn['man-woman-girl']).toBe('👨‍👩‍👧');
  });
});
