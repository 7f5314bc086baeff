import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import { ZeroAddress } from "ethers";

/** The live networks as hardhat.config.ts names them. */
export interface LiveNetworks {
  l1: { network: string; chainId: number };
  l2: { network: string; chainId: number };
  /** Seconds per L1 block on the live L1 (12 on Sepolia): what the voting delay and period in blocks last. */
  l1BlockSeconds: number;
}

type ParameterFile = Record<string, Record<string, unknown>>;

/** The accounts a rehearsal puts where the live parameter files hold the zero address, by module and name. */
export type RehearsalAddresses = Record<string, Record<string, string>>;

export interface FilledParameters {
  /** `<module>.<name>` of every value filled in, with the address put there. */
  filled: Record<string, string>;
}

/**
 * Copies `deploy/parameters/<network>.json` of `projectRoot` to `targetRoot`, with each zero address (the
 * placeholders an operator must fill in) replaced by the rehearsal's address for it; every other value is
 * written back exactly as it was read, so Ignition parses the file the live run will use. Refuses a
 * placeholder the rehearsal has no address for.
 */
export async function fillLiveParameters(
  projectRoot: string,
  targetRoot: string,
  network: string,
  addresses: RehearsalAddresses,
): Promise<FilledParameters> {
  const relative = path.join("deploy", "parameters", `${network}.json`);
  const live = JSON.parse(await readFile(path.join(projectRoot, relative), "utf8")) as ParameterFile;
  const filled: Record<string, string> = {};
  const copy: ParameterFile = {};
  for (const [moduleId, parameters] of Object.entries(live)) {
    copy[moduleId] = {};
    for (const [name, value] of Object.entries(parameters)) {
      if (value !== ZeroAddress) {
        copy[moduleId][name] = value;
        continue;
      }
      const address = addresses[moduleId]?.[name];
      if (address === undefined) throw new Error(`${relative}: the rehearsal has no address for the placeholder ${moduleId}.${name}`);
      copy[moduleId][name] = address;
      filled[`${moduleId}.${name}`] = address;
    }
  }
  await writeFile(path.join(targetRoot, relative), `${JSON.stringify(copy, null, 2)}\n`);
  return { filled };
}

/**
 * How a live parameter file and its devnet counterpart differ: values only one of them sets (the other
 * then takes the module's default) and values written in different JSON forms (`"259200n"`, a bigint to
 * Ignition, against `0`, a number), each of which the devnet path never exercises.
 */
export async function parameterDifferences(projectRoot: string, liveNetwork: string, devnetNetwork: string): Promise<string[]> {
  const read = async (network: string) =>
    JSON.parse(await readFile(path.join(projectRoot, "deploy", "parameters", `${network}.json`), "utf8")) as ParameterFile;
  const [live, devnet] = await Promise.all([read(liveNetwork), read(devnetNetwork)]);
  const differences: string[] = [];
  const form = (value: unknown) => (typeof value === "string" && /^\d+n$/.test(value) ? "bigint" : typeof value);
  for (const moduleId of new Set([...Object.keys(live), ...Object.keys(devnet)])) {
    const a = live[moduleId] ?? {};
    const b = devnet[moduleId] ?? {};
    for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const where = `${moduleId}.${name}`;
      if (!(name in b))
        differences.push(`${where}: set only in ${liveNetwork}.json (${JSON.stringify(a[name])}); the devnet uses the module's default`);
      else if (!(name in a)) differences.push(`${where}: set only in ${devnetNetwork}.json; the live networks use the module's default`);
      else if (form(a[name]) !== form(b[name]))
        differences.push(
          `${where}: a ${form(a[name])} live (${JSON.stringify(a[name])}), a ${form(b[name])} on the devnet (${JSON.stringify(b[name])})`,
        );
    }
  }
  return differences;
}
