// `npm run demo:record-loop` (with `npm start` running): records 30 fresh attestations in a row as the
// consumer (`RECORD_LOOP_COUNT=<n>` for another count: `hardhat run` passes no arguments to its script),
// alternating the first EVM and the first Solana demo holding, each sent by a plain ethers wallet with no
// gas override (the limit is exactly the estimate) and awaited before the next answer is asked. One line
// per recording, then `N recorded, M failed`; exits 1 on any failure.
import path from "node:path";

import { recordInARow } from "../src/devnet/record-loop.ts";
import { devnetProvider } from "../src/devnet/op-devnet.ts";
import { readDemoStack } from "../src/common/stack-file.ts";

const DEFAULT_COUNT = 30;

const argument = process.env.RECORD_LOOP_COUNT;
const count = argument === undefined || argument === "" ? DEFAULT_COUNT : Number(argument);
if (!Number.isSafeInteger(count) || count < 1) {
  console.error(`RECORD_LOOP_COUNT must be a positive integer (${DEFAULT_COUNT} when unset); got ${argument}`);
  process.exit(1);
}
const stack = await readDemoStack(path.resolve(import.meta.dirname, "..")).catch((error: Error) => {
  console.error(error.message);
  return process.exit(1);
});
const l2 = devnetProvider(stack.l2.rpcUrl, stack.l2.chainId);
try {
  const result = await recordInARow(stack, l2, {
    count,
    onEach: (recording, failure) =>
      console.log(
        `${String(recording.index + 1).padStart(3)}  ${recording.subject}  estimate ${recording.estimate ?? "-"}  ` +
          `used ${recording.gasUsed ?? "-"}  ${failure === undefined ? recording.status : `FAILED: ${failure.reason}`}`,
      ),
  });
  console.log(`${result.recorded} recorded, ${result.failures.length} failed`);
  if (result.failures.length > 0) process.exitCode = 1;
} catch (error) {
  console.error(`demo:record-loop failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  l2.destroy();
}
