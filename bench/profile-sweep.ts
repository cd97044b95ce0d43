import { sweep } from './sweep-bench.ts';

// `node --import tsx bench/profile-sweep.ts [postgres-url]`: one sweep of N (10,000) due approvals,
// printing its time, CPU per check and peak RSS; with PROFILE_TO=file.cpuprofile also a CPU profile
// of the pass alone, for `node bench/profile-top.mjs file.cpuprofile` (bench/README: where the time goes).
const url = process.argv[2];
const count = Number(process.env.N ?? 10_000);
const result = await sweep(count, {
  latencyMs: 20,
  concurrency: 16,
  databaseUrl: url,
  profileTo: process.env.PROFILE_TO,
});
process.stdout.write(`${JSON.stringify(result)}\n`);
