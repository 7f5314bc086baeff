// `npm run bench:hub-flood`, against the running stack (`npm start`): attested answers timed while the
// hub is quiet, then while 1,000 unauthenticated WebSockets are opened and held and 200 hellos signed by
// throw-away keys (100 keys, each twice) arrive (BENCH_FLOOD_SOCKETS, BENCH_FLOOD_HELLOS,
// BENCH_FLOOD_QUERIES). Bars: attested answers keep answering 200 with p95 under the flood ≤ 2× quiet; at
// most one L2 request per hello the hub checked (none for a key it refused before).
import path from "node:path";

import { measureHubFlood } from "../src/bench/hub-flood.ts";

const projectRoot = path.resolve(import.meta.dirname, "..");
const numberFrom = (name: string) => (process.env[name] === undefined ? undefined : Number(process.env[name]));
const result = await measureHubFlood({
  projectRoot,
  sockets: numberFrom("BENCH_FLOOD_SOCKETS"),
  hellos: numberFrom("BENCH_FLOOD_HELLOS"),
  queries: numberFrom("BENCH_FLOOD_QUERIES"),
  log: (line) => console.log(line),
});
const [quiet, flood] = result.timings;
console.log("\n| phase | answered 200 | failed | p50 ms | p95 ms |\n|---|---:|---:|---:|---:|");
for (const row of result.timings)
  console.log(`| ${row.phase} | ${row.answers} | ${row.failures} | ${row.p50Ms.toFixed(0)} | ${row.p95Ms.toFixed(0)} |`);
const ratio = flood.p95Ms / quiet.p95Ms;
console.log(`\np95 under the flood / quiet: ${ratio.toFixed(2)} (bar ≤ 2)`);
console.log(`unauthenticated sockets: ${JSON.stringify(result.sockets)}`);
console.log(`hellos: ${JSON.stringify(result.hellos)}; ${result.hellosAnswered} reached the hub's checks`);
console.log(`the hub's L2 requests during the flood: ${result.l2Requests} (bar ≤ ${result.hellosAnswered}, one per checked hello)`);
console.log(`refusals counted in /metrics: ${JSON.stringify(result.refusals)}`);
const met = quiet.failures === 0 && flood.failures === 0 && ratio <= 2 && result.l2Requests <= result.hellosAnswered;
console.log(met ? "\nbars met" : "\nbars MISSED");
process.exitCode = met ? 0 : 1;
