// Completes package-lock.json with the other platforms' optional native packages (EDR, anvil, LiteSVM).
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

// Only the native packages this project knows, with their platform spelled out: a guess is worse than
// a clear failure.
const KNOWN_PREFIXES = ["@nomicfoundation/edr-", "@foundry-rs/anvil-", "litesvm-"];
const OS = ["darwin", "linux", "win32"];
const CPU: Record<string, string> = { x64: "x64", amd64: "x64", arm64: "arm64" };

function platformOf(packageName: string): Pick<LockEntry, "os" | "cpu" | "libc"> {
  const parts = (packageName.split("/").pop() ?? packageName).split("-");
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.map((part) => CPU[part]).find((value) => value !== undefined);
  if (os === undefined || cpu === undefined) throw new Error(`cannot tell the platform of ${packageName}`);
  const entry: Pick<LockEntry, "os" | "cpu" | "libc"> = { os: [os], cpu: [cpu] };
  if (parts.includes("musl")) entry.libc = ["musl"];
  if (parts.includes("gnu")) entry.libc = ["glibc"];
  return entry;
}

const lockPath = "package-lock.json";
const lock = JSON.parse(readFileSync(lockPath, "utf8")) as { packages: Record<string, LockEntry> };
const added: string[] = [];
for (const entry of Object.values(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (key in lock.packages || !KNOWN_PREFIXES.some((prefix) => name.startsWith(prefix))) continue;
    lock.packages[key] = { version, ...(entry.dev ? { dev: true } : {}), optional: true, ...platformOf(name) };
    added.push(`${name}@${version}`);
  }
}
if (added.length === 0) {
  // Leave the file untouched: a newer modification time would make `npm start` / `npm test` reinstall.
  console.log("lockfile already complete");
} else {
  const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
  writeFileSync(lockPath, `${JSON.stringify({ ...lock, packages: sorted }, null, 2)}\n`);
  console.log(`added ${added.join(", ")}`);
}
