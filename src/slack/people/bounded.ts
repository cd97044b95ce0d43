// Collections that forget their oldest entries past a size, so a long-running process stays small.

/** A Map that, when full, drops the entry inserted first before adding a new key. */
export class BoundedMap<V> extends Map<string, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: string, value: V): this {
    if (!this.has(key) && this.size >= this.max) this.delete(this.keys().next().value as string);
    return super.set(key, value);
  }
}

/** A set of strings with the same bound. */
export class BoundedSet {
  private readonly items: BoundedMap<true>;

  constructor(max: number) {
    this.items = new BoundedMap(max);
  }

  has(item: string): boolean {
    return this.items.has(item);
  }

  add(item: string): void {
    this.items.set(item, true);
  }

  delete(item: string): void {
    this.items.delete(item);
  }
}
