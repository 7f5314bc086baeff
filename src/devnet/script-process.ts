import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";

import { SERVICE_V8_FLAGS } from "../common/service-v8-flags.ts";

/** A project script (`scripts/<name>.ts`) running as its own process, as `npm run <name>` runs it. */
export interface ScriptProcess {
  child: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Sends `signal` (default SIGTERM) unless it has exited; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `scripts/<script>` of `projectRoot` on this Node (which runs the TypeScript directly, as the
 * container does) with a service's V8 flags (`SERVICE_V8_FLAGS`), PATH and `env` only. Its output is
 * appended to `logFile`, or, without one, its standard output is dropped and its errors go to this process's.
 */
export async function spawnScript(options: {
  projectRoot: string;
  script: string;
  env: Record<string, string>;
  logFile?: string;
}): Promise<ScriptProcess> {
  const { projectRoot, logFile } = options;
  let log: NodeJS.WritableStream | undefined;
  if (logFile !== undefined) {
    await mkdir(path.dirname(logFile), { recursive: true });
    const stream = createWriteStream(logFile, { flags: "a" });
    await new Promise<void>((resolve, reject) => stream.once("open", () => resolve()).once("error", reject));
    log = stream;
  }
  const args = ["--disable-warning=ExperimentalWarning", ...SERVICE_V8_FLAGS, path.join(projectRoot, "scripts", options.script)];
  const child = spawn(process.execPath, args, {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdio: ["ignore", log === undefined ? "ignore" : "pipe", log === undefined ? "inherit" : "pipe"],
  });
  if (log !== undefined) {
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
  }
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      log?.end();
      resolve(code);
    }),
  );
  return {
    child,
    exited,
    stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
        // A paused process (SIGSTOP: npm run chaos) handles nothing until it runs again.
        if (signal !== "SIGKILL") child.kill("SIGCONT");
      }
      return exited;
    },
  };
}
