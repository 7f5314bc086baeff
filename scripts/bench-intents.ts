// `npm run bench:intents`: on a devnet of its own, 20 fast withdrawals L2 → L1 (alternately the primary token and ETH)
// through the intent layer, timed from the chains' events, their gas against the bars, and a standard withdrawal
// of the same devnet beside them (docs/intents.md).
import { formatIntentReport, measureIntents } from "../src/bench/intents.ts";

const report = await measureIntents({ orders: 20, onProgress: (line) => console.error(line) });
console.log(formatIntentReport(report));
