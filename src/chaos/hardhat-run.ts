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
 * The environment the stack's process runs in beside the script's own (`npm start` sets the same). Hardhat's
 * command line loads TypeScript through tsx, which transforms each file not in its cache with esbuild's
 * synchronous API, and that API keeps a worker thread for the life of the process (a V8 heap of its own,
 * relaying the pings of an esbuild service process it starts). The worker allocates slowly, so with the
 * service flags' fixed young generation (two 16 MiB semi-spaces, `SERVICE_V8_FLAGS`) it touches its pages
 * over hours: 0.2 MiB a minute of the stack process's RSS in a soak (read from /proc/<pid>/smaps, each V8
 * page's header naming its heap). With `ESBUILD_WORKER_THREADS=0` esbuild runs each transform as a process
 * of its own instead: about a second more at a start with a cold cache, and no thread or service after it.
 */
export const STACK_PROCESS_ENV: Readonly<Record<string, string>> = { ESBUILD_WORKER_THREADS: "0" };

/**
 * What `npm run chaos` and `npm run soak` share: `hardhat run` takes no arguments of the script's, so this parses
 * `args` with `options`, turns the values into the script's environment with `env` (a string it returns says what
 * is wrong with them), and runs `hardhat run <script>` with it, on this Node with a service's V8 flags and
 * `STACK_PROCESS_ENV`. The script runs in a process group of its own, and the first SIGINT, SIGTERM or SIGHUP (as
 * SIGTERM) this process gets is sent to that group, once: the script stops its stack on it, and a second signal
 * (npm passes on what the terminal sent too) would cut that short. Resolves with the code to exit with: the script's, 128 + the signal's
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
    env: { ...process.env, NODE_OPTIONS: "--disable-warning=ExperimentalWarning", ...STACK_PROCESS_ENV, ...env },
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
