// Preloaded (`node --import ./bench/peak-rss.mjs …`) into a command the bench runs: says the
// process's peak resident memory on stderr as it exits (Linux reports maxRSS in kilobytes).
process.on('exit', () => {
  process.stderr.write(`peak-rss-kb ${process.resourceUsage().maxRSS}\n`);
});
