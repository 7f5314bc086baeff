import { readFileSync } from "node:fs";

import { Contract, type ContractRunner, type InterfaceAbi } from "ethers";

// The compiled artifacts are the one source of each ABI (`npm run build`; the node's image builds them).
// Services run by plain Node read them rather than TypeChain's factories, whose modules need a build step
// to load; TypeChain's types (erased at run time) still type the contracts.
const ARTIFACTS = new URL("../../artifacts/contracts/", import.meta.url);

/** The ABI of the project's contract `name` (at `<folder>/` under contracts/, if it is in one). */
export function abiOf(name: string, folder = ""): InterfaceAbi {
  const file = new URL(`${folder === "" ? "" : `${folder}/`}${name}.sol/${name}.json`, ARTIFACTS);
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { abi: InterfaceAbi }).abi;
  } catch {
    throw new Error(`the ${name} artifact is missing: run \`npm run build\` first`);
  }
}

/** The contract `name` at `address`, typed as `T` (its TypeChain type). */
export function contractAt<T>(name: string, address: string, runner: ContractRunner, folder = ""): T {
  return new Contract(address, abiOf(name, folder), runner) as unknown as T;
}
