// Files the compiled app reads at run time next to its modules: the sandbox page and the
// simulator's default directory. tsc compiles code only. `node scripts/copy-assets.mjs [outDir]`.
import { cpSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2] ?? 'dist';
cpSync('src/sandbox/page', join(out, 'sandbox/page'), { recursive: true });
cpSync('src/simulator/default-directory.json', join(out, 'simulator/default-directory.json'));
