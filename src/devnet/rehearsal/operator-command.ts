import { spawn } from "node:child_process";

export interface CommandResult {
  command: string;
  exitCode: number | null;
  /** Killed by the rehearsal (`interruptWhen`) rather than exited by itself. */
  interrupted: boolean;
  output: string;
  durationMs: number;
}

/**
 * Runs `npm <args>` in `cwd` with PATH, HOME and `env` only, as an operator types it. The command runs in
 * a process group of its own (npm starts a shell that starts Node), so that an interruption kills every
 * process of it at once with SIGKILL, like a lost terminal or a crashed machine: nothing gets to clean up.
 * `interruptWhen` is asked every 50 ms while the command runs.
 */
export async function runOperatorCommand(
  cwd: string,
  args: readonly string[],
  env: Record<string, string>,
  options: { interruptWhen?: () => Promise<boolean>; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const started = Date.now();
  const child = spawn("npm", [...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? cwd, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let interrupted = false;
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve(code));
  });
  let running = true;
  void exited.finally(() => (running = false)).catch(() => undefined);
  const timeout = setTimeout(killGroup, options.timeoutMs ?? 15 * 60_000);
  try {
    if (options.interruptWhen !== undefined) {
      while (running) {
        if (await options.interruptWhen().catch(() => false)) {
          interrupted = true;
          killGroup();
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const exitCode = await exited;
    return { command: `npm ${args.join(" ")}`, exitCode, interrupted, output, durationMs: Date.now() - started };
  } finally {
    clearTimeout(timeout);
    if (running) killGroup();
  }
}

/** A command's result, or an error with the end of its output when it did not exit 0. */
export function succeeded(result: CommandResult): CommandResult {
  if (result.exitCode !== 0)
    throw new Error(`\`${result.command}\` exited with ${String(result.exitCode)}:\n${result.output.split("\n").slice(-30).join("\n")}`);
  return result;
}
