// Running the command-line tools the image is made with (buildah, debootstrap, docker, podman, npm, tar):
// one place that spawns them, passes their output on when asked, and says which command failed and why.
import { spawn, type StdioOptions } from "node:child_process";
import path from "node:path";
import { AvnError } from "@avn/protocol/errors";

/** A tool's run that did not end with exit code 0. */
export class CommandError extends AvnError<"COMMAND_FAILED"> {
  readonly command: string;
  readonly exitCode: number | null;
  readonly stderr: string;
  constructor(command: string, exitCode: number | null, stderr: string, cause?: unknown) {
    const tail = stderr.trim().split("\n").slice(-12).join("\n");
    super("COMMAND_FAILED", `${command} failed${exitCode === null ? "" : ` (exit ${exitCode})`}${tail === "" ? "" : `:\n${tail}`}`, {
      cause,
    });
    this.name = "CommandError";
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

export interface RunOptions {
  cwd?: string;
  /** Passed on line by line as the tool writes (its progress); its output is still returned. */
  onOutput?: (line: string) => void;
  /** Written to the tool's standard input, which is closed after. */
  input?: string;
}

/**
 * The environment for the tools: the Node running this first on PATH (npm runs on it), and nothing of the
 * repository's own node_modules/.bin, Hardhat's settings (HARDHAT_*: a Hardhat run inside the image would
 * read them, error HHE22) or npm's (npm_*: the repository as the prefix).
 */
export function toolEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const root = path.resolve(import.meta.dirname, "..", "..", "..");
  const outside = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((entry) => entry !== "" && !path.resolve(entry).startsWith(root + path.sep));
  const clean: NodeJS.ProcessEnv = { ...env, PATH: [path.dirname(process.execPath), ...outside].join(path.delimiter) };
  for (const name of Object.keys(clean)) if (name === "NODE_OPTIONS" || /^(HARDHAT_|npm_)/i.test(name)) delete clean[name];
  return clean;
}

/** Runs `command` with `args` (no shell); resolves to its standard output, rejects with a CommandError. */
export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdio: StdioOptions = [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"];
    const child = spawn(command, args, { cwd: options.cwd, env: toolEnvironment(), stdio });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const label = [command, ...args].join(" ");
    const relay = (chunks: Buffer[]) => {
      let pending = "";
      return (chunk: Buffer) => {
        chunks.push(chunk);
        if (options.onOutput === undefined) return;
        pending += chunk.toString("utf8");
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) options.onOutput(line);
      };
    };
    child.stdout!.on("data", relay(stdout));
    child.stderr!.on("data", relay(stderr));
    if (options.input !== undefined) child.stdin!.end(options.input);
    child.once("error", (error) => reject(new CommandError(label, null, error.message, error)));
    child.once("close", (code) => {
      const out = Buffer.concat(stdout).toString("utf8");
      if (code === 0) resolve(out);
      else reject(new CommandError(label, code, Buffer.concat(stderr).toString("utf8") || out));
    });
  });
}

/** Whether `command args` runs and exits 0 (a probe: its output is dropped). */
export async function succeeds(command: string, args: readonly string[]): Promise<boolean> {
  try {
    await run(command, args);
    return true;
  } catch {
    return false;
  }
}
