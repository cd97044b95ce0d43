// The Slack CLI's start hook (`slack run`, .slack/hooks.json). The CLI has created the dev app from
// manifest.yml and installed it, and hands over its tokens: SLACK_CLI_XOXB and SLACK_CLI_XAPP
// (newer CLIs also set SLACK_BOT_TOKEN and SLACK_APP_TOKEN). They become the app's own settings,
// and the app runs over Socket Mode as `npm start` would run it (.env is read as usual, so the
// approval service's settings come from there). SLACK_CLI_CUSTOM_FILE_PATH, the CLI's way of
// naming another entry point, runs that file with node instead.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const bot = process.env.SLACK_CLI_XOXB || process.env.SLACK_BOT_TOKEN;
const app = process.env.SLACK_CLI_XAPP || process.env.SLACK_APP_TOKEN;
if (!bot || !app) {
  process.stderr.write(
    'slack run gave the app no tokens (SLACK_CLI_XOXB and SLACK_CLI_XAPP): update the Slack CLI (slack upgrade), or connect by hand (docs/connect-slack.md#by-hand).\n',
  );
  process.exit(1);
}
// Socket Mode whatever .env says: the CLI's dev app has no request URL to reach.
Object.assign(process.env, { SLACK_BOT_TOKEN: bot, SLACK_APP_TOKEN: app, APP_MODE: 'socket' });

const custom = process.env.SLACK_CLI_CUSTOM_FILE_PATH;
if (custom) {
  const child = spawn(process.execPath, [resolve(root, custom)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  // The CLI passes flags of its own (its protocol); the app takes none of them.
  process.argv = [process.argv[0], join(root, 'scripts/start.mjs')];
  await import('./start.mjs');
}
