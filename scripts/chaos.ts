// `npm run chaos [-- --short] [-- --only 1,3]`: the fault scenarios of docs/operations.md ("npm run chaos")
// against a local stack of its own (stop `npm start` first). `hardhat run` takes no arguments of the
// script's, so this reads them and runs scripts/chaos-run.ts with them in its environment.
import { runHardhatScript } from "../src/chaos/hardhat-run.ts";
import { SCENARIOS } from "../src/chaos/scenarios.ts";

process.exitCode = await runHardhatScript({
  script: "scripts/chaos-run.ts",
  args: process.argv.slice(2),
  options: { short: { type: "boolean" }, only: { type: "string" } },
  usage: "usage: npm run chaos [-- --short] [-- --only <scenario numbers, comma-separated>]",
  env: (values) => {
    if (values.only !== undefined) {
      const known = [...new Set(SCENARIOS.map((scenario) => scenario.number))];
      const asked = /^\d+(,\d+)*$/.test(values.only) ? values.only.split(",").map(Number) : [];
      const unknown = asked.filter((number) => !known.includes(number));
      if (asked.length === 0 || unknown.length > 0)
        return `${unknown.length > 0 ? `no scenario ${unknown.join(", ")}: ` : ""}the scenarios are ${known.join(", ")}`;
    }
    return { CHAOS_SHORT: String(values.short === true), ...(values.only === undefined ? {} : { CHAOS_ONLY: values.only }) };
  },
});
