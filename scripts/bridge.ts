// `npm run bridge -- <command>`: deposits and withdrawals through the OP standard bridge. The library lives
// in packages/bridge (ethers v5 + @eth-optimism/sdk), its command line in src/bridge/cli.ts; this entry
// point only wires the process in.
import path from "node:path";

import { runCli } from "../src/bridge/cli.ts";

process.exitCode = await runCli(process.argv.slice(2), {
  projectRoot: path.resolve(import.meta.dirname, ".."),
  env: process.env,
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
});
