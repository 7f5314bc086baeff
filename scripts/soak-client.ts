// The soak's client (`npm run soak` starts it as a child process of its own, src/chaos/soak-client.ts): the load
// at the demo key's limits on the local stack whose stack file is its argument, told over IPC when to report
// and when to stop.
import { serveSoakClient } from "../src/chaos/soak-client.ts";
import { readStackFile } from "../src/common/stack-file.ts";

if (process.send === undefined) {
  console.error("scripts/soak-client.ts runs under npm run soak, which asks it over IPC; run npm run soak");
  process.exit(1);
}
await serveSoakClient(await readStackFile(process.argv[2]), process);
