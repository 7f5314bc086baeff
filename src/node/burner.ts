import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

import { Wallet } from "ethers";

export const BURNER_FILE = "burner-wallet.json";

export interface Burner {
  wallet: Wallet;
  /** True when this call generated the key (first start). */
  created: boolean;
  /** True when the file was readable by others and its mode was tightened to 0600. */
  tightenedMode: boolean;
}

/**
 * The node's burner wallet: generated on first start and kept in `cacheDir` (mode 0600, owner only);
 * every later start reuses it, since licenses are delegated to its address. The file is created
 * exclusively (written aside, then hard-linked into place), so two processes starting at once end up with
 * the same key, and an existing file is never overwritten: a key that cannot be read is an error to fix,
 * not a reason to lose the delegations and the gas money of the old one.
 */
export async function loadOrCreateBurner(cacheDir: string): Promise<Burner> {
  await mkdir(cacheDir, { recursive: true, mode: 0o700 });
  const file = path.join(cacheDir, BURNER_FILE);
  let created = false;
  try {
    await stat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    created = await createExclusively(file);
  }
  const tightenedMode = await keepPrivate(file);
  return { wallet: await readBurner(file), created, tightenedMode };
}

async function createExclusively(file: string): Promise<boolean> {
  const wallet = new Wallet(`0x${randomBytes(32).toString("hex")}`);
  const aside = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(aside, `${JSON.stringify({ address: wallet.address, privateKey: wallet.privateKey }, null, 2)}\n`, {
    mode: 0o600,
    flag: "wx",
  });
  try {
    await link(aside, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false; // another process won the race
    throw error;
  } finally {
    await unlink(aside);
  }
}

async function keepPrivate(file: string): Promise<boolean> {
  const { mode } = await stat(file);
  if ((mode & 0o077) === 0) return false;
  await chmod(file, 0o600);
  return true;
}

async function readBurner(file: string): Promise<Wallet> {
  let parsed: { address?: unknown; privateKey?: unknown };
  try {
    parsed = JSON.parse(await readFile(file, "utf8")) as typeof parsed;
  } catch {
    throw new Error(
      `${file} is not a burner wallet file (unreadable JSON); restore it from a backup or move it away to generate a new burner`,
    );
  }
  let wallet: Wallet;
  try {
    wallet = new Wallet(String(parsed.privateKey));
  } catch {
    throw new Error(`${file} holds no valid private key; restore it from a backup or move it away to generate a new burner`);
  }
  if (typeof parsed.address === "string" && parsed.address.toLowerCase() !== wallet.address.toLowerCase()) {
    throw new Error(`${file} names address ${parsed.address}, but its key belongs to ${wallet.address}; the file is corrupt`);
  }
  return wallet;
}
