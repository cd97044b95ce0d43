// The Slack CLI's get-manifest hook (.slack/hooks.json): manifest.yml, as the JSON the CLI wants.
// The manifest stays YAML, with its comments, and this is the one place that turns it into JSON.
// SLACK_APPROVALS_MANIFEST picks a variant instead (deploy/slack/*.yml), e.g. without history scopes.
//
// The answer follows the CLI's hook protocol (docs.slack.dev/tools/slack-cli/reference/hooks,
// "protocol negotiation"): get-hooks (@slack/cli-hooks' own) declares `message-boundaries`, so the
// CLI passes `--protocol=message-boundaries --boundary=<b>` and reads the JSON between two
// boundaries; without them (the default protocol) the JSON is all of stdout. It is written here
// rather than imported: @slack/cli-hooks documents its hook commands, not its modules.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const file = process.env.SLACK_APPROVALS_MANIFEST || 'manifest.yml';
const manifest = JSON.stringify(parse(readFileSync(join(root, file), 'utf8')));

// strict: false, because a newer CLI may pass flags of its own that this hook can ignore.
const { values } = parseArgs({
  options: { protocol: { type: 'string' }, boundary: { type: 'string' } },
  strict: false,
});
if (values.protocol === 'message-boundaries') {
  if (typeof values.boundary !== 'string' || values.boundary === '') {
    process.stderr.write('get-manifest: --protocol=message-boundaries came without a --boundary\n');
    process.exit(1);
  }
  process.stdout.write(`${values.boundary}${manifest}${values.boundary}\n`);
} else {
  process.stdout.write(`${manifest}\n`);
}
