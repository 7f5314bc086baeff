import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import type { ChallengeTarget } from "../challenger/challenger.ts";
import { loadChallengerConfig } from "../challenger/config.ts";
import { waitFor } from "../common/wait-for.ts";
import { spawnScript, type ScriptProcess } from "./script-process.ts";

export interface StackChallenger extends ScriptProcess {
  logFile: string;
}

/**
 * Runs `npm run challenger` for the local stack (its own process, as an operator would run it) over
 * `targets`, written to the network's folder, and waits for its start line: a configuration it refuses
 * stops the stack's start here, with the log named.
 */
export async function startStackChallenger(input: {
  projectRoot: string;
  workDir: string;
  key: string;
  l2RpcUrl: string;
  verificationRegistry: string;
  targets: ChallengeTarget[];
  meanIntervalSeconds: number;
  onProgress: (line: string) => void;
}): Promise<StackChallenger> {
  const targetsFile = path.join(input.workDir, "challenge-targets.json");
  await writeFile(targetsFile, `${JSON.stringify(input.targets, null, 2)}\n`);
  const env = {
    CHALLENGER_KEY: input.key,
    L2_RPC_URL: input.l2RpcUrl,
    VERIFICATION_REGISTRY: input.verificationRegistry,
    CHALLENGE_TARGETS: targetsFile,
    CHALLENGE_MEAN_INTERVAL_SECONDS: String(input.meanIntervalSeconds),
  };
  loadChallengerConfig(env); // a wrong setting fails here, with every problem listed, not in the child's log
  const logFile = path.join(input.workDir, "logs", "challenger.log");
  input.onProgress(
    `Starting the challenger: bursts of 2–5 jobs about ${input.targets.length} challenge holdings, every ${input.meanIntervalSeconds} s on average (log in ${path.relative(process.cwd(), logFile)})…`,
  );
  const script = await spawnScript({ projectRoot: input.projectRoot, script: "challenger.ts", env, logFile });
  await waitFor("the challenger's start", async () => {
    if (script.child.exitCode !== null) throw new Error(`the challenger exited; see ${logFile}`);
    return (await readFile(logFile, "utf8").catch(() => "")).includes('"msg":"challenger starting"');
  });
  return { ...script, logFile };
}
