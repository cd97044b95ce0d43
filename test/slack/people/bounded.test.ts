import { describe, expect, it } from 'vitest';
import { BoundedMap, BoundedSet } from '../../../src/slack/people/bounded.ts';

describe('BoundedMap', () => {
  it('drops the oldest entry when a new key would pass the bound', () => {
    const map = new BoundedMap<number>(2);
    map.set('a', 1).set('b', 2).set('c', 3);
    expect([...map.keys()]).toEqual(['b', 'c']);
  });

  it('updates an existing key without dropping anything', () => {
    const map = new BoundedMap<number>(2);
    map.set('a', 1).set('b', 2).set('a', 3);
    expect(Object.fromEntries(map)).toEqual({ a: 3, b: 2 });
  });
});

describe('BoundedSet', () => {
  it('forgets the oldest item past its bound', () => {
    const set = new BoundedSet(2);
    set.add('a');
    set.add('b');
    set.add('c');
    expect([set.has('a'), set.has('b'), set.has('c')]).toEqual([false, true, true]);
  });
});
