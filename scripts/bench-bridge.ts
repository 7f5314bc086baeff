// `npm run bench:bridge`: on a fresh devnet, the time from an L1 deposit to the L2 balance and the time of a
// full withdrawal cycle (the finalization period skipped by advancing L1 time). Prints median and p95.
import { formatTimings, measureBridgeTimings } from "../src/bench/bridge-timing.ts";

console.log("Bridge timings on the local devnet (L2 block time 2 s; relay and proposer poll every 250 ms)\n");
console.log(formatTimings(await measureBridgeTimings({ deposits: 20, withdrawals: 5 })));
