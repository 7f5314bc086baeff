// Builds the circuit node's image from the repository's Dockerfile: with a Docker or Podman engine as it
// stands (the official Node 22 slim base), else with buildah from the base made on this machine (base.ts).
import path from "node:path";

import { defaultBaseSpec, ensureBase, type BaseSpec } from "./base.ts";
import { buildahArgs, type Engine } from "./engine.ts";
import { run } from "./exec.ts";
import { buildInputsHash, INPUTS_LABEL } from "./inputs.ts";
import { withMachineLock } from "./lock.ts";

/** The image's name, as docs/node.md writes it (buildah and Podman store it as localhost/avn-node:latest). */
export const NODE_IMAGE = "avn-node";

export interface BuildOptions {
  engine: Engine;
  /** The repository's root: the build context, with the Dockerfile. */
  root: string;
  tag?: string;
  /** The base's versions (buildah only); by default this Node, this npm, bookworm. */
  spec?: BaseSpec;
  /** The build's own output, line by line. */
  onOutput?: (line: string) => void;
  /** What the build is doing, in a few words. */
  onProgress?: (line: string) => void;
}

export interface BuiltImage {
  tag: string;
  engine: Engine["kind"];
  /** The base image the Dockerfile started from. */
  base: string;
  /** Whether the base was made by this build (buildah; false when it was reused). */
  baseMade: boolean;
  baseSeconds: number;
  buildSeconds: number;
  /** True when an image built from the same inputs was there already (buildah), and nothing was built. */
  upToDate: boolean;
}

/** The label `name` of buildah's image `tag`, or undefined (no such image, or no such label). */
async function buildahLabel(tag: string, name: string): Promise<string | undefined> {
  try {
    const inspected = JSON.parse(await run("buildah", buildahArgs("inspect", "--type", "image", tag))) as {
      OCIv1: { config?: { Labels?: Record<string, string> } };
    };
    return inspected.OCIv1.config?.Labels?.[name];
  } catch {
    return undefined;
  }
}

/**
 * The open-file limit this process may raise its own to (`ulimit -Hn`), or undefined when unlimited or unread.
 * buildah's chroot isolation gives a `RUN` step 1,024 open files unless told otherwise (measured with buildah 1.28
 * here, under a hard limit of 20,000): the build stages' `npm ci`, reading the mounted npm cache, failed with EMFILE
 * at that in a fresh clone's `.ci/run`. buildah cannot raise a limit past the hard one it runs under (EPERM), so the
 * build asks for exactly that.
 */
async function openFilesLimit(): Promise<number | undefined> {
  const limit = (await run("sh", ["-c", "ulimit -Hn"]).catch(() => "")).trim();
  return /^\d+$/.test(limit) ? Number(limit) : undefined;
}

/**
 * Builds the image, one build at a time on a machine. With buildah, an image built from the same inputs
 * (inputs.ts) is kept as it is, so a build that waited for another one, or a build with nothing changed, ends
 * at once; each stage is one layer (no `--layers`: on vfs each instruction's layer is a full copy of the tree),
 * and the two install stages run side by side.
 */
export async function buildNodeImage(options: BuildOptions): Promise<BuiltImage> {
  const { engine, root } = options;
  const tag = options.tag ?? NODE_IMAGE;
  const progress = options.onProgress ?? (() => undefined);
  return withMachineLock(
    "node-image-build",
    async () => {
      const began = performance.now();
      if (engine.kind !== "buildah") {
        progress(`${engine.command} build -t ${tag} .`);
        await run(engine.command, ["build", "-t", tag, "-f", path.join(root, "Dockerfile"), root], { onOutput: options.onOutput });
        const buildSeconds = (performance.now() - began) / 1000;
        return { tag, engine: engine.kind, base: "node:22-slim", baseMade: false, baseSeconds: 0, buildSeconds, upToDate: false };
      }
      const spec = options.spec ?? (await defaultBaseSpec());
      const base = await ensureBase({ spec, onProgress: progress });
      progress(base.made ? `made the base ${base.tag}` : `reusing the base ${base.tag}`);
      const baseSeconds = (performance.now() - began) / 1000;
      // The base by its id: a base made again under the same tag is another base.
      const baseId = (await run("buildah", buildahArgs("inspect", "--type", "image", "--format", "{{.FromImageID}}", base.tag))).trim();
      const inputs = await buildInputsHash(root, `${base.tag}@${baseId}`);
      if ((await buildahLabel(tag, INPUTS_LABEL)) === inputs) {
        progress(`${tag} is up to date (built from the same Dockerfile, base and files)`);
        return { tag, engine: "buildah", base: base.tag, baseMade: base.made, baseSeconds, buildSeconds: 0, upToDate: true };
      }
      // The build stages' `npm ci` read the packages from this machine's npm cache (the repository's own
      // install filled it) instead of fetching each from the registry again.
      const npmCache = (await run("npm", ["config", "get", "cache"])).trim();
      const openFiles = await openFilesLimit();
      progress(`buildah bud --build-arg NODE_IMAGE=${base.tag} -t ${tag} .`);
      const built = performance.now();
      await run(
        "buildah",
        buildahArgs(
          "bud",
          "--isolation",
          "chroot",
          "--layers=false",
          "--jobs",
          "2",
          "--pull=never",
          "--label",
          `${INPUTS_LABEL}=${inputs}`,
          "--build-arg",
          `NODE_IMAGE=${base.tag}`,
          "--volume",
          `${npmCache}:/root/.npm`,
          ...(openFiles === undefined ? [] : ["--ulimit", `nofile=${openFiles}:${openFiles}`]),
          "-t",
          tag,
          "-f",
          path.join(root, "Dockerfile"),
          root,
        ),
        { onOutput: options.onOutput },
      );
      const buildSeconds = (performance.now() - built) / 1000;
      return { tag, engine: "buildah", base: base.tag, baseMade: base.made, baseSeconds, buildSeconds, upToDate: false };
    },
    (holder) => progress(`waiting for another image build on this machine (process ${holder}) to end…`),
  );
}
