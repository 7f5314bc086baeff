// `npm run gov -- <command>`: the protocol's governance from a terminal (delegate, propose L2 changes,
// vote, queue, execute, status). Logic lives in src/governance/.
import path from "node:path";

import { runCli } from "../src/governance/cli.ts";

const code = await runCli(process.argv.slice(2), {
  projectRoot: path.resolve(import.meta.dirname, ".."),
  env: process.env,
  print: (line) => console.log(line),
  printError: (line) => console.error(line),
});
process.exitCode = code;
