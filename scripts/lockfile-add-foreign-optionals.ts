// Completes package-lock.json with the other platforms' optional native packages (EDR, anvil).
//
// The npm registry mirror this project installs from serves only this platform's native packages, so
// `npm install` writes a lockfile without the others, and `npm ci` then refuses it ("Missing: … from
// lock file"). This adds a lock entry (version, os, cpu, libc) for each missing optional dependency;
// npm skips them on other platforms without fetching them. Run after changing dependencies:
//   node scripts/lockfile-add-foreign-optionals.ts
import { readFileSync, writeFileSync } from "node:fs";

type LockEntry = {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  optionalDependencies?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
};

function platformOf(packageName: string): Pick<LockEntry, "os" | "cpu" | "libc"> {
  const tail = packageName.split("/").pop() ?? packageName;
  const os = ["darwin", "linux", "win32"].find((name) => tail.includes(`-${name}-`));
  if (os === undefined) throw new Error(`cannot tell the platform of ${packageName}`);
  const entry: Pick<LockEntry, "os" | "cpu" | "libc"> = { os: [os], cpu: [tail.includes("arm64") ? "arm64" : "x64"] };
  if (tail.endsWith("-musl")) entry.libc = ["musl"];
  if (tail.endsWith("-gnu")) entry.libc = ["glibc"];
  return entry;
}

const lockPath = "package-lock.json";
const lock = JSON.parse(readFileSync(lockPath, "utf8")) as { packages: Record<string, LockEntry> };
const added: string[] = [];
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (key in lock.packages) continue;
    lock.packages[key] = { version, ...(entry.dev ? { dev: true } : {}), optional: true, ...platformOf(name) };
    added.push(`${name}@${version}`);
  }
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
writeFileSync(lockPath, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
console.log(added.length === 0 ? "lockfile already complete" : `added ${added.join(", ")}`);
