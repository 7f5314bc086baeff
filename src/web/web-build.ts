import { execFile } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

/** Where the web app's workspace and its production build live. */
export function webPaths(projectRoot: string): { appDir: string; distDir: string } {
  const appDir = path.join(projectRoot, "apps", "web");
  return { appDir, distDir: path.join(appDir, "dist") };
}

/** The newest modification time under `target` (a file or a directory tree), 0 when it is missing. */
async function newestChange(target: string): Promise<number> {
  const info = await stat(target).catch(() => undefined);
  if (info === undefined) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const entry of await readdir(target)) newest = Math.max(newest, await newestChange(path.join(target, entry)));
  return newest;
}

/**
 * Workspaces outside `apps/web` that the app bundles: the shared protocol package (governance's proposal
 * encoding and rules, shared with the CLI so both build and read proposals the same way; the credits
 * channel's typed data, shared with the credits service so the page signs what the service checks; the
 * network configuration's schema, shared with the web server).
 */
export const SHARED_SOURCES = [path.join("packages", "protocol", "src"), path.join("packages", "protocol", "package.json")];

/**
 * Whether `apps/web/dist` is newer than everything the app is made from: its sources, the shared
 * modules it imports from the project, its Vite and ABI-generation settings, and the contract
 * artifacts its ABIs come from.
 */
export async function isWebBuildCurrent(projectRoot: string): Promise<boolean> {
  const { appDir, distDir } = webPaths(projectRoot);
  const built = await newestChange(path.join(distDir, "index.html"));
  const inputs = ["src", "public", "index.html", "vite.config.ts", "wagmi.config.ts", "package.json"].map((entry) =>
    path.join(appDir, entry),
  );
  inputs.push(path.join(projectRoot, "artifacts", "contracts"), ...SHARED_SOURCES.map((file) => path.join(projectRoot, file)));
  let newestInput = 0;
  for (const input of inputs) {
    // The generated ABIs are an output of this step, not an input.
    const change = input.endsWith("src") ? await newestSourceChange(input) : await newestChange(input);
    newestInput = Math.max(newestInput, change);
  }
  return built > 0 && built >= newestInput;
}

/** Builds the web app unless its build is current (`isWebBuildCurrent`): `npm start` then reuses it. Returns whether it built. */
export async function ensureWebBuild(projectRoot: string, onProgress: (line: string) => void = () => undefined): Promise<boolean> {
  if (await isWebBuildCurrent(projectRoot)) return false;
  const { appDir } = webPaths(projectRoot);
  onProgress("Building the web app (ABIs from the artifacts, then Vite)…");
  const run = promisify(execFile);
  const bin = (name: string) => path.join(projectRoot, "node_modules", ".bin", name);
  await run(bin("wagmi"), ["generate"], { cwd: appDir });
  // A production build whatever the caller's environment says (a test runner may set NODE_ENV).
  await run(bin("vite"), ["build", "--logLevel", "warn"], { cwd: appDir, env: { ...process.env, NODE_ENV: "production" } });
  return true;
}

async function newestSourceChange(srcDir: string): Promise<number> {
  let newest = 0;
  for (const entry of await readdir(srcDir)) {
    if (entry === "generated") continue;
    newest = Math.max(newest, await newestChange(path.join(srcDir, entry)));
  }
  return newest;
}
