// Runs before `npm start` and `npm test` (npm's prestart/pretest hooks), so that the README's two commands
// work on a fresh clone: it checks for Node 22+ and installs the locked dependencies (npm ci) when they
// are missing or older than package-lock.json. Plain JavaScript with no dependencies: it runs before any
// are installed.
import { execSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

// 22.18 is the first Node 22 that runs TypeScript scripts (`node scripts/*.ts`) without a flag.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `Node ${process.version} found; this project needs Node 22.18 or newer (Hardhat 3).\n` +
      "Install it, then run the command again:  npm install -g --prefix /usr/local node@22 && hash -r",
  );
  process.exit(1);
}

// npm writes this hidden lockfile on every install: older than package-lock.json means stale.
const installed = "node_modules/.package-lock.json";
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync("package-lock.json").mtimeMs) {
  console.log("Installing the locked dependencies (npm ci)…");
  execSync("npm ci", { stdio: "inherit" });
}
