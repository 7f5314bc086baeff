// `npm run bench:qos`: how long one read of each license's figures takes (`epochQos`, what
// GET /api/network/nodes and the web app's Network page replay) for networks and epochs of growing size,
// side by side in one run: the local stack's first hour, then a day and a whole week of a larger network.
import { measureQosFigures } from "../src/bench/qos-figures.ts";

const HOUR = 3_600;
const rows = measureQosFigures([
  { licenses: 3, elapsedSeconds: HOUR, heartbeatSeconds: 60, jobSeconds: 10, votesPerJob: 3 },
  { licenses: 100, elapsedSeconds: 24 * HOUR, heartbeatSeconds: 60, jobSeconds: 10, votesPerJob: 3 },
  { licenses: 100, elapsedSeconds: 7 * 24 * HOUR, heartbeatSeconds: 60, jobSeconds: 10, votesPerJob: 3 },
  { licenses: 1_000, elapsedSeconds: 24 * HOUR, heartbeatSeconds: 60, jobSeconds: 2, votesPerJob: 3 },
]);
console.log(
  "| licenses | epoch so far | beats every | a job every | events | epochQos ms | heap MB |\n|---:|---:|---:|---:|---:|---:|---:|",
);
for (const { scale, events, computeMs, heapMegabytes } of rows) {
  console.log(
    `| ${scale.licenses} | ${scale.elapsedSeconds / HOUR} h | ${scale.heartbeatSeconds} s | ${scale.jobSeconds} s | ${events.toLocaleString("en-US")} | ${computeMs.toFixed(1)} | ${heapMegabytes.toFixed(0)} |`,
  );
}
const [small, , week] = rows;
console.log(`\na week of 100 licenses / the local stack's first hour: ${(week.computeMs / small.computeMs).toFixed(0)}× the time`);
