// The Slack CLI's get-manifest hook (.slack/hooks.json): manifest.yml, as the JSON the CLI wants,
// answered in the protocol the CLI asked for (@slack/cli-hooks implements it). The manifest stays
// YAML, with its comments, and this is the one place that turns it into JSON.
// SLACK_APPROVALS_MANIFEST picks a variant instead (deploy/slack/*.yml), e.g. without history scopes.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getProtocol } from '@slack/cli-hooks/src/protocols.js';
import { parse } from 'yaml';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const file = process.env.SLACK_APPROVALS_MANIFEST || 'manifest.yml';
const manifest = parse(readFileSync(join(root, file), 'utf8'));
getProtocol(process.argv.slice(1)).respond(JSON.stringify(manifest));
