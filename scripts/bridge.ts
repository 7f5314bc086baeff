// `npm run bridge -- <command>`: deposits and withdrawals through the OP standard bridge. The logic
// lives in packages/bridge (ethers v5 + @eth-optimism/sdk); this entry point only wires the process in.
import path from "node:path";

import { runCli } from "@avn/bridge";

process.exitCode = await runCli(process.argv.slice(2), {
  projectRoot: path.resolve(import.meta.dirname, ".."),
  env: process.env,
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
});
