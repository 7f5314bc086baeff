import { AbiCoder, concat, Contract, encodeBytes32String, toBeHex, type ContractRunner } from "ethers";

import { EAS_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { easArtifact } from "./eas-artifacts.ts";

/** EIP1271Verifier's `string private _name` (after OZ EIP712's two fallback strings): the only slot EAS's constructor writes. */
const EAS_NAME_SLOT = 2n;
const EAS_NAME = "EAS";

/** A provider that sends raw RPC requests and runs calls (ethers' JSON-RPC providers, Hardhat's). */
export type RpcProvider = ContractRunner & { send(method: string, params: unknown[]): Promise<unknown> };

/** How a chain's code and storage are set: `anvil` on anvil, `hardhat` on Hardhat's in-process network. */
export type SetCodeDialect = "anvil" | "hardhat";

/**
 * Puts EAS and its SchemaRegistry, from the pinned `@ethereum-attestation-service/eas-contracts` build, at the
 * addresses the OP stack predeploys them at (`EAS_PREDEPLOYS`), as on every OP-stack L2. Each runtime code is
 * what its creation code returns (run as a creation `eth_call`, with EAS's registry argument the predeploy's),
 * so the immutables (the registry, the versions) are the constructor's. Storage: SchemaRegistry's constructor
 * writes none; EAS's writes only its EIP-712 name, which is set here and read back, with the registry, to check
 * the installation.
 */
export async function installEasPredeploys(provider: RpcProvider, dialect: SetCodeDialect): Promise<void> {
  const registry = easArtifact("SchemaRegistry");
  const eas = easArtifact("EAS");
  const easCreation = concat([eas.bytecode, AbiCoder.defaultAbiCoder().encode(["address"], [EAS_PREDEPLOYS.SchemaRegistry])]);
  for (const [address, creation] of [
    [EAS_PREDEPLOYS.SchemaRegistry, registry.bytecode],
    [EAS_PREDEPLOYS.EAS, easCreation],
  ] as const) {
    const runtime = (await provider.send("eth_call", [{ data: creation }, "latest"])) as string;
    await provider.send(`${dialect}_setCode`, [address, runtime]);
  }
  // A string under 32 bytes is stored in its slot: its bytes left-aligned, its length times two in the last byte.
  const nameWord = toBeHex(BigInt(encodeBytes32String(EAS_NAME)) | BigInt(EAS_NAME.length * 2), 32);
  await provider.send(`${dialect}_setStorageAt`, [EAS_PREDEPLOYS.EAS, toBeHex(EAS_NAME_SLOT, 32), nameWord]);
  const installed = new Contract(EAS_PREDEPLOYS.EAS, eas.abi, provider);
  const name = String(await installed.getFunction("getName")());
  const schemaRegistry = String(await installed.getFunction("getSchemaRegistry")());
  if (name !== EAS_NAME || schemaRegistry.toLowerCase() !== EAS_PREDEPLOYS.SchemaRegistry.toLowerCase())
    throw new Error(`EAS at ${EAS_PREDEPLOYS.EAS} reads name "${name}" and registry ${schemaRegistry}: not as installed`);
}
