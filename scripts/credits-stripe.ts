// `npm run credits:stripe -- <command>`: what Stripe would send the local credits service (signed test
// events), to buy credits on the local stack without a payment provider. Logic lives in src/credits/.
import path from "node:path";

import { runStripeCli } from "../src/credits/stripe-cli.ts";

process.exitCode = await runStripeCli(process.argv.slice(2), {
  projectRoot: path.resolve(import.meta.dirname, ".."),
  env: process.env,
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
});
