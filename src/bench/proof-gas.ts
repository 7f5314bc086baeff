import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import { getBytes } from "ethers";
import { decodeAbiParameters, type Hex } from "viem";

import { buildBalanceProof } from "../chains/evm/balance-proof.ts";
import { opArtifact } from "../op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import type { GasRow } from "./gas.ts";
import { gasOf } from "./gas.ts";
import { formatTargetTable } from "./verification-gas.ts";

/** The proof path's gas targets (issue 33), by operation name. */
export const PROOF_GAS_TARGETS: Array<{ operation: string; atMost: bigint; reference: string }> = ["OZ ERC-20", "OZ ERC-721"].flatMap(
  (token) =>
    (["current", "recorded"] as const).map((block) => ({
      operation: proofOperation(token, block),
      atMost: 250_000n,
      reference: "<= 250k execution gas",
    })),
);

/** A proof row's name: the token, and whether the proven block is `L1Block`'s current one or one `L1BlockHashes` recorded. */
function proofOperation(token: string, block: "current" | "recorded"): string {
  return `StorageProofVerifier.verifyBalance, ${token}, ${block} L1 block (execution)`;
}

/** The size of one measured proof, in bytes, and its node counts. */
export interface ProofSize {
  token: string;
  header: number;
  accountProof: { nodes: number; bytes: number };
  storageProof: { nodes: number; bytes: number };
  /** `abi.encode(BalanceProof)`, what `verifyBalance` takes. */
  encoded: number;
}

/** The OP depositor account, the only sender `L1Block.setL1BlockValues` accepts. */
const DEPOSITOR = "0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001";
/** OpenZeppelin's ERC20 keeps `_balances` at slot 0; its ERC721 at slot 3 (after `_name`, `_symbol`, `_owners`). */
const OZ_ERC20_SLOT = 0n;
const OZ_ERC721_SLOT = 3n;

/**
 * Measures `StorageProofVerifier.verifyBalance` for a holder of a plain OpenZeppelin ERC-20 and of an ERC-721,
 * on the simulated network acting as both L1 and L2: the real Bedrock `L1Block` is installed at its predeploy
 * address and made to report the proven block, as the depositor does on an OP chain. Each proof is measured
 * twice: while its block is `L1Block`'s current one, then once `L1BlockHashes` recorded it and `L1Block` moved
 * on (the block the API answers at when a keeper records blocks). The view is sent as a
 * transaction and its execution gas is the receipt's less the transaction base and calldata, as for
 * `isAttestationValid`. The simulated chain's state trie holds few accounts, so its proofs are shallower than
 * Ethereum mainnet's (about 8 account nodes and 6 to 8 storage nodes for a popular token): the gas grows with
 * each node, see the sizes printed beside the table.
 */
export async function measureProofGas(ethers: HardhatEthers): Promise<{ rows: GasRow[]; sizes: ProofSize[] }> {
  const [sender, holder] = await ethers.getSigners();
  const l1BlockAddress = L2_PREDEPLOYS.L1Block;
  await ethers.provider.send("hardhat_setCode", [l1BlockAddress, opArtifact("L1Block").deployedBytecode]);
  await ethers.provider.send("hardhat_impersonateAccount", [DEPOSITOR]);
  await ethers.provider.send("hardhat_setBalance", [DEPOSITOR, "0xde0b6b3a7640000"]);
  const l1Block = await ethers.getContractAt(opArtifact("L1Block").abi, l1BlockAddress, await ethers.getSigner(DEPOSITOR));
  const hashes = await ethers.deployContract("L1BlockHashes", [l1BlockAddress]);
  const verifier = await ethers.deployContract("StorageProofVerifier", [await hashes.getAddress(), l1BlockAddress]);
  const erc20 = await ethers.deployContract("PlainERC20", [holder.address, 10n ** 24n]);
  const erc721 = await ethers.deployContract("PlainERC721", [holder.address, 3n]);
  const rpc = { request: <T>(method: string, params: unknown[]) => ethers.provider.send(method, params) as Promise<T> };

  const rows: GasRow[] = [];
  const sizes: ProofSize[] = [];
  for (const [label, token, balancesSlot] of [
    ["OZ ERC-20", await erc20.getAddress(), OZ_ERC20_SLOT],
    ["OZ ERC-721", await erc721.getAddress(), OZ_ERC721_SLOT],
  ] as const) {
    const block = (await ethers.provider.getBlock("latest"))!;
    const setValues = l1Block.getFunction("setL1BlockValues");
    await gasOf(setValues.send(block.number, block.timestamp, 0n, block.hash, 0n, ethers.ZeroHash, 0n, 0n));
    const proof = await buildBalanceProof(rpc, { token, owner: holder.address, balancesSlot, blockNumber: BigInt(block.number) });
    const args: [string, string, bigint, bigint, string] = [token, holder.address, balancesSlot, 3_600n, proof.encoded];
    // A refused proof costs less than a valid one: measure only what verifies.
    const [balance] = await verifier.verifyBalance(...args);
    if (balance !== proof.value || balance === 0n) throw new Error(`the measured ${label} proof does not verify`);
    const data = verifier.interface.encodeFunctionData("verifyBalance", args);
    const executionGas = async () => (await gasOf(sender.sendTransaction({ to: await verifier.getAddress(), data }))) - intrinsicGas(data);
    rows.push({ operation: proofOperation(label, "current"), gasUsed: await executionGas() });
    await gasOf(hashes.getFunction("record").send());
    const later = (await ethers.provider.getBlock("latest"))!;
    await gasOf(setValues.send(later.number, later.timestamp, 0n, later.hash, 0n, ethers.ZeroHash, 0n, 0n));
    rows.push({ operation: proofOperation(label, "recorded"), gasUsed: await executionGas() });
    sizes.push(sizeOf(label, proof.encoded));
  }
  return { rows, sizes };
}

/** The sizes of an encoded proof's parts. */
function sizeOf(token: string, encoded: Hex): ProofSize {
  const [decoded] = decodeAbiParameters(
    [
      {
        type: "tuple",
        components: [
          { name: "header", type: "bytes" },
          { name: "accountProof", type: "bytes[]" },
          { name: "storageProof", type: "bytes[]" },
        ],
      },
    ],
    encoded,
  );
  const bytesOf = (nodes: readonly Hex[]) => nodes.reduce((sum, node) => sum + (node.length - 2) / 2, 0);
  return {
    token,
    header: (decoded.header.length - 2) / 2,
    accountProof: { nodes: decoded.accountProof.length, bytes: bytesOf(decoded.accountProof) },
    storageProof: { nodes: decoded.storageProof.length, bytes: bytesOf(decoded.storageProof) },
    encoded: (encoded.length - 2) / 2,
  };
}

/** The transaction base cost and calldata cost of `data` (EIP-2028 prices), which execution gas leaves out. */
function intrinsicGas(data: string): bigint {
  let gas = 21_000n;
  for (const byte of getBytes(data)) gas += byte === 0 ? 4n : 16n;
  return gas;
}

/** Formats the proof path's rows with their targets, then the proof sizes. */
export function formatProofTable({ rows, sizes }: { rows: GasRow[]; sizes: ProofSize[] }): string {
  const table = formatTargetTable(rows, PROOF_GAS_TARGETS, "operation (proof of a holder's balance)");
  const lines = sizes.map(
    (size) =>
      `  ${size.token} proof: ${size.encoded} bytes encoded (header ${size.header}, account proof ${size.accountProof.nodes} nodes / ` +
      `${size.accountProof.bytes} bytes, storage proof ${size.storageProof.nodes} nodes / ${size.storageProof.bytes} bytes)`,
  );
  return [table, ...lines].join("\n");
}
