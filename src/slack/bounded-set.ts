/** A set that forgets its oldest entries past `max`, so a long-running process stays small. */
export class BoundedSet {
  private readonly items = new Set<string>();

  constructor(private readonly max: number) {}

  has(item: string): boolean {
    return this.items.has(item);
  }

  add(item: string): void {
    if (this.items.size >= this.max) this.items.delete(this.items.values().next().value as string);
    this.items.add(item);
  }

  delete(item: string): void {
    this.items.delete(item);
  }
}
