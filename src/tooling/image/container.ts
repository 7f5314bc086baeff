// Runs the node's image as an operator would (`docker run -v <dir>:/app/cache -e … avn-node`), with the engine
// at hand. Without a daemon a container is buildah's: `buildah from` the image (on vfs a copy of its files, so
// made once), `buildah run` the image's command in it with chroot isolation, as often as it is started again
// (as `docker restart` keeps a container), then `buildah rm`. podman run is refused on these machines (crun's
// setrlimit). Either way the container shares the host's network, as `--network host` does, so it reaches
// services on 127.0.0.1.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";

import { buildahArgs, type Engine } from "./engine.ts";
import { run, toolEnvironment } from "./exec.ts";

export interface RunOptions {
  /** The container's environment (besides the image's own). */
  env: Record<string, string>;
  /** Host folders mounted into the container. */
  volumes: Array<{ host: string; container: string }>;
}

export interface RunningContainer {
  /** The container's output so far, line by line (standard output and error). */
  lines(): string[];
  /** Calls `listener` after each new line of output (and once more when the process ends); returns the unsubscriber. */
  onOutput(listener: () => void): () => void;
  /** Resolves with the exit code (or the signal's name) once the container's process ended. */
  readonly exited: Promise<number | string>;
  /** SIGTERM to the image's process (as `docker stop`), SIGKILL after `graceMs`; resolves with its exit. */
  stop(graceMs?: number): Promise<number | string>;
}

export interface Container {
  /** Starts the image's command (again) in this container. */
  start(options: RunOptions): RunningContainer;
  /** Removes the container (after its process ended). */
  remove(): Promise<void>;
}

/** The image's command (`ENTRYPOINT` then `CMD`), as buildah's container configuration has it. */
async function imageCommand(container: string): Promise<string[]> {
  const config = JSON.parse(await run("buildah", buildahArgs("inspect", "--type", "container", container))) as {
    OCIv1: { config?: { Entrypoint?: string[] | null; Cmd?: string[] | null } };
  };
  const command = [...(config.OCIv1.config?.Entrypoint ?? []), ...(config.OCIv1.config?.Cmd ?? [])];
  if (command.length === 0) throw new Error("the image names no command (CMD or ENTRYPOINT)");
  return command;
}

/**
 * The deepest descendant of `pid`: under buildah's chroot isolation the image's process runs below buildah and
 * its chroot helpers, in the host's process table. The stop signal goes to it, so that it ends as under
 * `docker stop` and buildah reports its exit code.
 */
async function deepestDescendant(pid: number): Promise<number> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ")".
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (Number.isInteger(ppid)) parents.set(Number(entry), ppid);
  }
  let current = pid;
  for (;;) {
    const child = [...parents].find(([, parent]) => parent === current)?.[0];
    if (child === undefined) return current;
    current = child;
  }
}

/** Collects a process's output, line by line, telling `onLines` after each chunk that completed a line. */
function collectLines(child: ChildProcess, onLines: () => void): string[] {
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    let pending = "";
    stream.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      lines.push(...parts);
      if (parts.length > 0) onLines();
    });
  }
  return lines;
}

function watch(child: ChildProcess, engine: Engine, stopCommand: () => Promise<void>, kill: () => Promise<void>): RunningContainer {
  const listeners = new Set<() => void>();
  const tell = () => {
    for (const listener of [...listeners]) listener();
  };
  const lines = collectLines(child, tell);
  child.once("close", tell);
  const exited = new Promise<number | string>((resolve) => {
    child.once("close", (code, signal) => resolve(code ?? signal ?? "unknown"));
    child.once("error", (error) => {
      lines.push(`could not start ${engine.command}: ${error.message}`);
      resolve("error");
    });
  });
  return {
    lines: () => [...lines],
    onOutput(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    exited,
    async stop(graceMs = 10_000) {
      await stopCommand();
      const timer = setTimeout(() => void kill(), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Creates a container of `image` (buildah: its working copy; Docker and Podman make one per start). */
export async function createContainer(engine: Engine, image: string): Promise<Container> {
  const envArgs = (env: Record<string, string>) => Object.entries(env).flatMap(([name, value]) => ["-e", `${name}=${value}`]);
  const volumeArgs = (options: RunOptions) => options.volumes.flatMap(({ host, container }) => ["-v", `${host}:${container}`]);
  if (engine.kind !== "buildah") {
    return {
      start(options) {
        const name = `avn-node-${randomBytes(4).toString("hex")}`;
        const args = ["run", "--rm", "--name", name, "--network", "host", ...envArgs(options.env), ...volumeArgs(options), image];
        const child = spawn(engine.command, args, { env: toolEnvironment(), stdio: ["ignore", "pipe", "pipe"] });
        const stop = async () => void (await run(engine.command, ["stop", "--time", "10", name]).catch(() => undefined));
        return watch(child, engine, stop, async () => void (await run(engine.command, ["kill", name]).catch(() => undefined)));
      },
      async remove() {},
    };
  }
  const container = (await run("buildah", buildahArgs("from", "--pull=never", image))).trim();
  let command: string[];
  try {
    command = await imageCommand(container);
  } catch (error) {
    await run("buildah", buildahArgs("rm", container)).catch(() => undefined);
    throw error;
  }
  return {
    start(options) {
      const args = buildahArgs(
        "run",
        "--isolation",
        "chroot",
        ...envArgs(options.env),
        ...volumeArgs(options),
        container,
        "--",
        ...command,
      );
      const child = spawn("buildah", args, { env: toolEnvironment(), stdio: ["ignore", "pipe", "pipe"] });
      const signal = async (name: NodeJS.Signals) => {
        if (child.exitCode !== null || child.pid === undefined) return;
        try {
          process.kill(await deepestDescendant(child.pid), name);
        } catch {
          // already gone
        }
      };
      return watch(
        child,
        engine,
        () => signal("SIGTERM"),
        () => signal("SIGKILL"),
      );
    },
    async remove() {
      await run("buildah", buildahArgs("rm", container)).catch(() => undefined);
    },
  };
}
