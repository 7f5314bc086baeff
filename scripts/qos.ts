// `npm run qos -- [--license <id>] [--json] [--rpc-url <url> --registry <address> [--reward-pools <address>]]`: each license's quality of
// service in the current epoch (docs/verification.md, "Quality of service"), read from the L2's registries;
// by default the running local stack's.
import path from "node:path";

import { readStackFile, stackFilePath } from "../src/common/stack-file.ts";
import { runQosCli } from "../src/api/network/qos-cli.ts";

const stack = await readStackFile(stackFilePath(path.resolve(import.meta.dirname, ".."))).catch(() => undefined);
const registry = stack?.contracts?.l2?.VerificationRegistry;
const defaults =
  stack?.l2 !== undefined && registry !== undefined
    ? { rpcUrl: stack.l2.rpcUrl, verificationRegistry: registry, rewardPools: stack.contracts?.l2?.RewardPools }
    : undefined;
process.exitCode = await runQosCli(process.argv.slice(2), defaults, { print: console.log, printError: console.error });
