// The image's size, its base's, and its layers (what each step of the Dockerfile added), as the engine
// reports them: for buildah from the image's manifest (uncompressed layer sizes) and history.
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

import { buildahArgs, type Engine } from "./engine.ts";
import { run } from "./exec.ts";

export interface ImageLayer {
  /** The instruction that made it (the history's `created_by`, shortened). */
  createdBy: string;
  bytes: number;
}

export interface ImageReport {
  tag: string;
  bytes: number;
  layers: ImageLayer[];
  base?: { tag: string; bytes: number; layers: number };
  /** What takes the room in the node's folder (buildah only): its entries, and the largest packages. */
  contents?: Array<{ path: string; bytes: number }>;
}

/** The size of `tag` and its layers, each with the instruction that made it. */
export async function layersOf(engine: Engine, tag: string): Promise<ImageLayer[]> {
  if (engine.kind === "buildah") {
    const inspected = JSON.parse(await run("buildah", buildahArgs("inspect", "--type", "image", tag))) as {
      Manifest: string;
      OCIv1: { history?: Array<{ created_by?: string; empty_layer?: boolean }> };
    };
    const layers = (JSON.parse(inspected.Manifest) as { layers: Array<{ size: number }> }).layers;
    const steps = (inspected.OCIv1.history ?? []).filter((entry) => entry.empty_layer !== true);
    // Built without `--layers`, a stage is one layer, which the history names by the stage's last instruction.
    const named =
      steps.length === layers.length && !layers.some((_, index) => /^\/bin\/sh -c #\(nop\) LABEL /.test(steps[index]?.created_by ?? ""));
    return layers.map((layer, index) => ({
      createdBy:
        named || index === 0 ? shorten(steps[index]?.created_by ?? "?") : "the Dockerfile's last stage, all its instructions (one layer)",
      bytes: layer.size,
    }));
  }
  const lines = (await run(engine.command, ["history", "--no-trunc", "--human=false", "--format", "{{.Size}}\t{{.CreatedBy}}", tag]))
    .trim()
    .split("\n");
  return lines
    .map((line) => {
      const [size, ...rest] = line.split("\t");
      return { createdBy: shorten(rest.join("\t")), bytes: Number(size) };
    })
    .filter((layer) => layer.bytes > 0)
    .reverse();
}

/** Reduces buildah's and Docker's `/bin/sh -c #(nop) COPY …` wording to the instruction. */
function shorten(createdBy: string): string {
  return createdBy
    .replace(/^\/bin\/sh -c #\(nop\)\s*/, "")
    .replace(/^\/bin\/sh -c /, "RUN ")
    .replace(/\s+/g, " ")
    .trim();
}

/** The bytes of the files under `target`, links not followed. */
async function bytesUnder(target: string): Promise<number> {
  const info = await lstat(target);
  if (!info.isDirectory()) return info.size;
  const entries = await readdir(target);
  let sum = 0;
  for (const entry of entries) sum += await bytesUnder(path.join(target, entry));
  return sum;
}

/** The largest entries of `folder` in buildah's image `tag` and of its node_modules (read through a mount). */
export async function contentsOf(tag: string, folder: string, count = 8): Promise<Array<{ path: string; bytes: number }>> {
  const container = (await run("buildah", buildahArgs("from", "--pull=never", tag))).trim();
  try {
    const root = path.join((await run("buildah", buildahArgs("mount", container))).trim(), folder);
    const sizes = async (dir: string, depth: number): Promise<Array<{ path: string; bytes: number }>> => {
      const names = await readdir(dir).catch(() => [] as string[]);
      const expanded = depth > 0 ? names.flatMap((name) => (name.startsWith("@") ? [] : [name])) : names;
      const scoped = depth > 0 ? names.filter((name) => name.startsWith("@")) : [];
      const entries = [...expanded];
      for (const scope of scoped) entries.push(...(await readdir(path.join(dir, scope))).map((name) => `${scope}/${name}`));
      return Promise.all(
        entries.map(async (name) => ({ path: path.relative(root, path.join(dir, name)), bytes: await bytesUnder(path.join(dir, name)) })),
      );
    };
    const top = (await sizes(root, 0)).sort((a, b) => b.bytes - a.bytes);
    const packages = (await sizes(path.join(root, "node_modules"), 1)).sort((a, b) => b.bytes - a.bytes).slice(0, count);
    return [...top, ...packages];
  } finally {
    await run("buildah", buildahArgs("umount", container)).catch(() => undefined);
    await run("buildah", buildahArgs("rm", container)).catch(() => undefined);
  }
}

/**
 * The report of `tag`, with its base's size when `base` is given (the first layers of the image are the base's),
 * and (buildah, unless `contents` is false) what takes the room in /app.
 */
export async function imageReport(engine: Engine, tag: string, base?: string, options: { contents?: boolean } = {}): Promise<ImageReport> {
  const layers = await layersOf(engine, tag);
  const bytes = layers.reduce((sum, layer) => sum + layer.bytes, 0);
  // Read through a container of the image: on vfs making one copies the image (tens of seconds).
  const contents = engine.kind === "buildah" && options.contents !== false ? await contentsOf(tag, "/app") : undefined;
  if (base === undefined) return { tag, bytes, layers, contents };
  const baseLayers = await layersOf(engine, base);
  return {
    tag,
    bytes,
    layers,
    base: { tag: base, bytes: baseLayers.reduce((sum, layer) => sum + layer.bytes, 0), layers: baseLayers.length },
    contents,
  };
}

const MB = 1_000_000;

/** The report as lines: total, base, what the node adds, then each layer above the base. */
export function formatReport(report: ImageReport): string[] {
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  const lines = [`${report.tag}: ${mb(report.bytes)} in ${report.layers.length} layers`];
  const baseLayers = report.base?.layers ?? 0;
  if (report.base !== undefined)
    lines.push(`  base ${report.base.tag}: ${mb(report.base.bytes)}; the node adds ${mb(report.bytes - report.base.bytes)}`);
  for (const [index, layer] of report.layers.entries())
    lines.push(`  ${index < baseLayers ? "base " : "     "}${mb(layer.bytes).padStart(10)}  ${layer.createdBy.slice(0, 110)}`);
  if (report.contents !== undefined) {
    lines.push("  what takes the room in /app (its entries, then the largest packages):");
    for (const entry of report.contents) lines.push(`     ${mb(entry.bytes).padStart(10)}  ${entry.path}`);
  }
  return lines;
}
