// `npm run soak -- --minutes 30 [--warm-up 5]`: a steady load at the demo key's limits against a local stack
// of its own (stop `npm start` first), with each process's memory every minute (docs/operations.md).
// `hardhat run` takes no arguments of the script's, so this reads them and runs scripts/soak-run.ts with them
// in its environment.
import { runHardhatScript } from "../src/chaos/hardhat-run.ts";

process.exitCode = await runHardhatScript({
  script: "scripts/soak-run.ts",
  args: process.argv.slice(2),
  options: { minutes: { type: "string", default: "30" }, "warm-up": { type: "string", default: "5" } },
  usage: "usage: npm run soak -- --minutes <whole minutes ≥ 1> [--warm-up <minutes left out of the slope, default 5>]",
  env: (values) => {
    const minutes = Number(values.minutes);
    const warmUp = Number(values["warm-up"]);
    if (!Number.isInteger(minutes) || minutes < 1 || !Number.isInteger(warmUp) || warmUp < 0 || warmUp >= minutes)
      return "--minutes must be a whole number of at least 1, --warm-up a whole number below it";
    return { SOAK_MINUTES: String(minutes), SOAK_WARM_UP: String(warmUp) };
  },
});
