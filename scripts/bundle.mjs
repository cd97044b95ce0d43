// The app's entry point as one file: `node scripts/bundle.mjs [outDir]` writes outDir/main.js
// (and its source map) from src/main.ts with the app's modules and its dependencies inside,
// replacing the main.js tsc wrote there. Run by the build (scripts/start.mjs) after tsc.
//
// Why: a start loaded some 1,300 files (kysely alone is 260, zod 95), and finding, reading and
// linking each one was most of a restart's time; a restart after kill -9 must answer /healthz
// within a second (bench/README). One file loads in a fraction of that. Everything else in
// outDir stays as tsc wrote it: the operator commands, and the sandbox, which main.js loads
// from there only when asked for (its page and the simulator's directory are files beside it).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = resolve(process.argv[2] ?? join(root, 'dist'));

await build({
  absWorkingDir: root,
  entryPoints: ['src/main.ts'],
  outfile: join(out, 'main.js'),
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  logLevel: 'warning',
  // better-sqlite3 loads its compiled addon from its own folder; pg-native is pg's optional
  // native driver, not installed.
  external: ['better-sqlite3', 'pg-native'],
  // The dependencies are CommonJS and call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  plugins: [
    {
      name: 'sandbox-beside',
      setup(build) {
        // The sandbox stays the file tsc wrote beside main.js, loaded from there.
        build.onResolve({ filter: /^\.\/sandbox\/sandbox\.ts$/ }, () => ({
          path: './sandbox/sandbox.js',
          external: true,
        }));
      },
    },
    {
      // Bolt loads, at its own start, receivers and an OAuth flow this app never uses: Express
      // and AWS Lambda receivers (its index re-exports them), and @slack/oauth (an install flow,
      // only with a client id; the app runs on one workspace's bot token). Left out, about a
      // tenth of a start; something that used them after all fails saying so.
      // And the Socket Mode client (with its own undici), which only Socket Mode needs: loaded
      // when Bolt's Socket Mode receiver makes one, never in HTTP mode.
      name: 'bolt-unused',
      setup(build) {
        const fromBolt = (args) => /[\\/]@slack[\\/]bolt[\\/]/.test(args.importer);
        build.onResolve(
          { filter: /^(@slack\/oauth|\.\/receivers\/(ExpressReceiver|AwsLambdaReceiver))$/ },
          (args) => (fromBolt(args) ? { path: args.path, namespace: 'left-out' } : undefined),
        );
        build.onLoad({ filter: /.*/, namespace: 'left-out' }, (args) => ({
          loader: 'js',
          contents: `const leftOut = () => {
  throw new Error(${JSON.stringify(`${args.path} is left out of dist/main.js (scripts/bundle.mjs)`)});
};
module.exports = new Proxy(leftOut, {
  get: (_, key) => (key === '__esModule' || typeof key !== 'string' ? undefined : leftOut()),
  apply: leftOut,
  construct: leftOut,
});`,
        }));
        build.onResolve({ filter: /^@slack\/socket-mode$/ }, (args) =>
          fromBolt(args)
            ? { path: args.path, namespace: 'on-first-use', pluginData: args.resolveDir }
            : undefined,
        );
        build.onLoad({ filter: /.*/, namespace: 'on-first-use' }, (args) => ({
          loader: 'js',
          resolveDir: args.pluginData,
          contents: `let loaded;
module.exports = new Proxy({}, {
  get: (_, key) => (loaded ??= require(${JSON.stringify(args.path)}))[key],
});`,
        }));
      },
    },
  ],
});
