/** Whether the arguments ask for help: `--help`, `-h` or `help` anywhere. */
export const asksForHelp = (args: readonly string[]): boolean =>
  args.some((a) => a === '--help' || a === '-h' || a === 'help');

/**
 * Answers with the usage when the arguments ask for it or are not usable, before anything is read
 * or opened (no database, no .env): help on stdout and exit 0, a mistake on stderr and exit 2.
 * Returns true when it answered, and the command has nothing more to do.
 */
export function answeredWithUsage(
  args: readonly string[],
  usage: string,
  usable: boolean,
): boolean {
  if (asksForHelp(args)) {
    process.stdout.write(`${usage}\n`);
    process.exitCode = 0;
    return true;
  }
  if (usable) return false;
  process.stderr.write(`${usage}\n`);
  process.exitCode = 2;
  return true;
}
