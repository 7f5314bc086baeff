import { spawn } from "node:child_process";
import { constants } from "node:os";
import path from "node:path";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";

import { SERVICE_V8_FLAGS } from "../common/service-v8-flags.ts";

type Values<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true }>>["values"];

/** The signals passed on to the script, each as the one it sends (the script stops its stack on SIGINT and SIGTERM). */
const FORWARDED: ReadonlyArray<[NodeJS.Signals, NodeJS.Signals]> = [
  ["SIGINT", "SIGINT"],
  ["SIGTERM", "SIGTERM"],
  ["SIGHUP", "SIGTERM"],
];

/**
 * What `npm run chaos` and `npm run soak` share: `hardhat run` takes no arguments of the script's, so this parses
 * `args` with `options`, turns the values into the script's environment with `env` (a string it returns says what
 * is wrong with them), and runs `hardhat run <script>` with it, on this Node with a service's V8 flags. The
 * script runs in a process group of its own, and the first SIGINT, SIGTERM or SIGHUP (as SIGTERM) this process
 * gets is sent to that group, once: the script stops its stack on it, and a second signal (npm passes on what the
 * terminal sent too) would cut that short. Resolves with the code to exit with: the script's, 128 + the signal's
 * number when a signal ended it, or 2 for arguments it refused (said on stderr with `usage`).
 */
export async function runHardhatScript<O extends ParseArgsOptionsConfig>(input: {
  script: string;
  args: string[];
  options: O;
  usage: string;
  env: (values: Values<O>) => Record<string, string> | string;
}): Promise<number> {
  let env: Record<string, string> | string;
  try {
    env = input.env(parseArgs({ args: input.args, options: input.options, strict: true }).values);
  } catch (error) {
    env = (error as Error).message;
  }
  if (typeof env === "string") {
    console.error(`${env}\n${input.usage}`);
    return 2;
  }
  const projectRoot = path.resolve(import.meta.dirname, "..", "..");
  // Hardhat's command line run by this Node itself (not npx), so that the stack's process gets a service's V8
  // flags, which NODE_OPTIONS refuses.
  const hardhat = path.join(projectRoot, "node_modules", ".bin", "hardhat");
  const child = spawn(process.execPath, [...SERVICE_V8_FLAGS, hardhat, "run", input.script], {
    cwd: projectRoot,
    stdio: ["ignore", "inherit", "inherit"],
    detached: true,
    env: { ...process.env, NODE_OPTIONS: "--disable-warning=ExperimentalWarning", ...env },
  });
  let forwarded = false;
  const listeners = FORWARDED.map(([received, sent]) => {
    const listener = () => {
      if (forwarded || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      forwarded = true;
      process.kill(-child.pid, sent);
    };
    process.on(received, listener);
    return [received, listener] as const;
  });
  try {
    return await new Promise<number>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (code, signal) => resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal])));
    });
  } finally {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  }
}
