// Which tool builds and runs the node's image on this machine. A Docker or Podman engine that answers wins:
// it builds the Dockerfile unchanged, from the official Node image. Without one (here `docker` is only a
// client: `docker info` fails, and no image registry is reachable), buildah builds it daemonless, with chroot
// isolation and the vfs storage driver, from a Node 22 base made on this machine (base.ts).
import { succeeds } from "./exec.ts";
import { AvnError } from "@avn/protocol/errors";

/** buildah's storage driver here: vfs needs no kernel overlay support nor fuse (it copies layers instead). */
export const BUILDAH_STORAGE_DRIVER = "vfs";

/** The tool that builds and runs images. */
export type Engine = { kind: "docker" | "podman"; command: string } | { kind: "buildah"; command: string };

/** No engine, and no buildah: what to install. */
export class NoImageToolError extends AvnError<"NO_IMAGE_TOOL"> {
  constructor() {
    super(
      "NO_IMAGE_TOOL",
      "No container engine and no buildah on this machine: start Docker or Podman (`docker info` must answer), or " +
        "install buildah and debootstrap to build without a daemon (Debian: apt-get install buildah debootstrap).",
    );
    this.name = "NoImageToolError";
  }
}

/** The arguments that put buildah on its storage driver; every buildah call starts with them. */
export function buildahArgs(...args: string[]): string[] {
  return ["--storage-driver", BUILDAH_STORAGE_DRIVER, ...args];
}

/**
 * The engine to use: a Docker or Podman engine that answers `info`, else buildah when installed, else none.
 * `AVN_IMAGE_ENGINE` (docker, podman or buildah) picks one instead, which must then work.
 */
export async function detectEngine(env: NodeJS.ProcessEnv = process.env): Promise<Engine | undefined> {
  const wanted = env.AVN_IMAGE_ENGINE?.trim();
  const candidates: Engine[] = [
    { kind: "docker", command: "docker" },
    { kind: "podman", command: "podman" },
    { kind: "buildah", command: "buildah" },
  ].filter((engine) => wanted === undefined || wanted === "" || engine.kind === wanted) as Engine[];
  if (candidates.length === 0) throw new Error(`AVN_IMAGE_ENGINE=${wanted}: expected docker, podman or buildah`);
  for (const engine of candidates) {
    // An engine's client alone is not enough: `info` asks the daemon (or Podman's own runtime).
    const probe = engine.kind === "buildah" ? ["--version"] : ["info"];
    if (await succeeds(engine.command, probe)) return engine;
  }
  return undefined;
}
