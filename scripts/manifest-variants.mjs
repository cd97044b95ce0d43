// `npm run manifests`: the leaner manifests in deploy/slack/, made from manifest.yml by leaving
// parts out, comments kept (test/manifest-variants.test.ts checks they are exactly that).
//   manifest.without-history.yml        no channels:history, groups:history, im:history (they serve
//                                       only the crash-recovery search for an earlier post)
//   manifest.without-workflow-step.yml  no Workflow Builder step (paid plans only)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isSeq, parseDocument } from 'yaml';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const source = readFileSync(join(root, 'manifest.yml'), 'utf8');

/** What each variant leaves out of manifest.yml. */
export const VARIANTS = {
  'manifest.without-history.yml': {
    why: 'without the history scopes: after a crash mid-post an update may be posted twice (docs/security.md#leaner-manifests)',
    scopes: ['channels:history', 'groups:history', 'im:history'],
    events: [],
    paths: [],
  },
  'manifest.without-workflow-step.yml': {
    why: 'without the Workflow Builder step, for workspaces without a paid plan (docs/security.md#leaner-manifests)',
    scopes: [],
    events: ['function_executed'],
    paths: [['functions'], ['settings', 'org_deploy_enabled'], ['settings', 'function_runtime']],
  },
};

/** manifest.yml with the variant's parts left out, as YAML text with its comments. */
export function variantOf(name) {
  const variant = VARIANTS[name];
  const doc = parseDocument(source);
  const drop = (path, values) => {
    const seq = doc.getIn(path, true);
    if (!isSeq(seq)) throw new Error(`manifest.yml has no list at ${path.join('.')}`);
    seq.items = seq.items.filter((item) => !values.includes(String(item.value ?? item)));
  };
  drop(['oauth_config', 'scopes', 'bot'], variant.scopes);
  drop(['settings', 'event_subscriptions', 'bot_events'], variant.events);
  for (const path of variant.paths) doc.deleteIn(path);
  doc.commentBefore = ` Made by \`npm run manifests\` from manifest.yml, ${variant.why};\n edit manifest.yml, not this.\n${doc.commentBefore ?? ''}`;
  return doc.toString({ lineWidth: 0 });
}

// `--check`: writes nothing; exits 1 naming each variant that is not what manifest.yml makes.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = [];
  for (const name of Object.keys(VARIANTS)) {
    const file = join(root, 'deploy/slack', name);
    if (!check) writeFileSync(file, variantOf(name));
    else if (readFileSync(file, 'utf8') !== variantOf(name)) stale.push(`deploy/slack/${name}`);
  }
  if (stale.length > 0) {
    process.stderr.write(
      `Not what manifest.yml makes (run npm run manifests): ${stale.join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}
