// `npm run demo:webhooks` (with `npm start` running): subscribes a demo holding to a receiver of its own,
// moves it (one unit of the demo ERC-20 in, then back), and prints each signed delivery as it arrived.
import path from "node:path";

import { readDemoStack } from "../src/common/stack-file.ts";
import { runWebhooksDemo } from "../src/devnet/demo-webhooks.ts";

try {
  const stack = await readDemoStack(path.resolve(import.meta.dirname, ".."));
  await runWebhooksDemo(stack, (line) => console.log(line));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
