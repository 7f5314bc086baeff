import type { HookContext, TestHooks } from "hardhat/types/hooks";

/**
 * The environment variable that makes a `hardhat test --coverage` process collect coverage data and nothing
 * else: `npm test` sets it on the mocha processes that run side by side (scripts/test-phases.mjs).
 */
export const COLLECT_ONLY_VARIABLE = "AVN_COVERAGE_COLLECT_ONLY";

function collectOnly(): boolean {
  return process.env[COLLECT_ONLY_VARIABLE] === "1";
}

/**
 * Test hooks of the `avn:coverage-collect-only` plugin (hardhat.config.ts). Hardhat's coverage plugin, on each
 * `hardhat test --coverage` run, clears the shared data folder (`coverage/data/<runner>/`) when the run starts,
 * saves the run's hits to a file of its own when its worker ends, and writes the report (`coverage/lcov.info`,
 * `coverage/html/`) when the run ends. Processes that run side by side would then write one report at once,
 * and a late starter would clear what an early finisher saved. They also run with `--no-compile` (a build would
 * save Hardhat's compile cache through one temporary file, which two processes raced for), so they never learn
 * the contracts' statement map the report needs, which only a build records.
 *
 * Under COLLECT_ONLY_VARIABLE=1 these handlers end the chain at the start and at the end of the run, so the
 * process only saves its own data file; `npm test` clears the folder before the processes start and reports
 * once after they all ended (scripts/coverage-report.ts). Project plugins' handlers run before Hardhat's own,
 * so not calling `next` is what skips them. Without the variable they pass every call on unchanged.
 */
export default async function collectOnlyTestHooks(): Promise<Partial<TestHooks>> {
  return {
    onTestRunStart: async (context: HookContext, id: string, next: (context: HookContext, id: string) => Promise<void>) => {
      if (!collectOnly()) await next(context, id);
    },
    onTestRunDone: async (context: HookContext, id: string, next: (context: HookContext, id: string) => Promise<void>) => {
      if (!collectOnly()) await next(context, id);
    },
  };
}
