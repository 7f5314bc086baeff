// `npm run bench:intents`: on a devnet of its own, 20 fast withdrawals L2 → L1 (alternately the primary token and ETH)
// through the intent layer, timed from the chains' events, their gas against the bars, then 6 fast deposits L1 → L2
// settled by the solver's reports, and a standard withdrawal of the same devnet beside them (docs/intents.md).
import { formatIntentReport, measureIntents } from "../src/bench/intents.ts";

const report = await measureIntents({ orders: 20, deposits: 6, onProgress: (line) => console.error(line) });
console.log(formatIntentReport(report));
