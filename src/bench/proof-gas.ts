import { readFileSync } from "node:fs";
import path from "node:path";

import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import { Contract, ContractFactory, NonceManager, Wallet, type JsonRpcProvider, type Signer } from "ethers";
import { encodeAbiParameters, keccak256, type Hex } from "viem";

import {
  balanceSlotKey,
  buildHistoryProof,
  buildStorageProof,
  encodeStorageProof,
  headerRlp,
  NO_HISTORY,
  type RpcBlock,
  type StorageProofParts,
} from "../chains/evm/balance-proof.ts";
import { devAccount } from "../devnet/accounts.ts";
import { startAnvil } from "../devnet/anvil.ts";
import { devnetProvider } from "../devnet/op-devnet.ts";
import { opArtifact } from "../op/artifacts.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";

/** One measured verification: the new verifier's execution gas, and the Bedrock reference's where it can run it. */
export interface ProofGasRow {
  operation: string;
  /** Account nodes + storage nodes (per slot). */
  nodes: string;
  bedrock?: bigint;
  calldata: bigint;
  /** The new verifier's call as a whole transaction from an account: its receipt's gas (calldata included). */
  transaction?: bigint;
  /** The bar of issue 49, if the row has one. */
  atMost?: bigint;
}

/** A derived figure (per slot, per node, history's extra) with its bar. */
export interface ProofGasFigure {
  figure: string;
  bedrock?: bigint;
  calldata: bigint;
  atMost: bigint;
}

export interface ProofGasReport {
  rows: ProofGasRow[];
  figures: ProofGasFigure[];
}

/** The OP depositor account, the only sender `L1Block.setL1BlockValues` accepts. */
const DEPOSITOR = "0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001";
/** OpenZeppelin's ERC20 keeps `_balances` at slot 0; its ERC721 at slot 3 (after `_name`, `_symbol`, `_owners`). */
const OZ_ERC20_SLOT = 0n;
const OZ_ERC721_SLOT = 3n;
const MAX_AGE = 3_600n;
/** How far back the history row proves: the issue's figure, within EIP-2935's 8,191 blocks. */
const HISTORY_DEPTH = 8_000;

/** The Bedrock reference's encoding: `(header, accountProof, storageProof)`. */
const BEDROCK_PROOF = [
  {
    type: "tuple",
    components: [
      { name: "header", type: "bytes" },
      { name: "accountProof", type: "bytes[]" },
      { name: "storageProof", type: "bytes[]" },
    ],
  },
] as const;

/** A fixture proof of test/fixtures/deep-proofs.json: an account and slots, proven at a made-up state root. */
interface DeepCase {
  name: string;
  inputs: { account: Hex; slots: Array<{ owner: Hex; key: Hex; value: Hex }> };
  outputs: { stateRoot: Hex; accountProof: Hex[]; storageProofs: Hex[][] };
}

/** A real mainnet proof of test/fixtures/mainnet-proofs.json (Scroll's test data). */
interface MainnetCase {
  block: number;
  account: Hex;
  storageKey: Hex;
  stateRoot: Hex;
  value: Hex;
  accountProof: Hex[];
  storageProof: Hex[];
}

function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../test/fixtures", name), "utf8")) as T;
}

/**
 * Measures `StorageProofVerifier` beside the Bedrock verifier it replaced (kept as `BedrockStorageProofVerifier`),
 * on the simulated network acting as both L1 and L2: the real Bedrock `L1Block` is installed at its predeploy
 * address and made to report the proven block, as the depositor does on an OP chain. Each call's execution gas is
 * measured around it by `GasMeter`.
 *
 * - Devnet holdings: OpenZeppelin ERC-20 and ERC-721 proofs of this chain's shallow tries, at `L1Block`'s current
 *   block and at one `L1BlockHashes` recorded.
 * - Mainnet depth: the deep fixtures (every branch on the path full, 8 and 12 account levels), under a header that
 *   carries their state root and that `L1Block` is made to report; and the four real mainnet proofs (the new
 *   verifier only: Bedrock's verifies balances by owner, and their slots' owners are not known).
 * - History: on anvil under Prague's rules (the in-process network has no EIP-2935 contract), a proof of a block
 *   8,000 back beside one of the current block.
 */
export async function measureProofGas(ethers: HardhatEthers): Promise<ProofGasReport> {
  const [sender, holder] = await ethers.getSigners();
  const chain = await deployVerifiers(ethers.provider as unknown as JsonRpcProvider, sender);
  const rows: ProofGasRow[] = [];
  const figures: ProofGasFigure[] = [];

  const erc20 = await ethers.deployContract("PlainERC20", [holder.address, 10n ** 24n]);
  const erc721 = await ethers.deployContract("PlainERC721", [holder.address, 3n]);
  for (const [label, token, balancesSlot] of [
    ["OZ ERC-20", await erc20.getAddress(), OZ_ERC20_SLOT],
    ["OZ ERC-721", await erc721.getAddress(), OZ_ERC721_SLOT],
  ] as const) {
    const block = await chain.latestBlock();
    await chain.reportBlock(block.number, block.timestamp, block.hash);
    const slot = balanceSlotKey(holder.address, balancesSlot);
    const bundle = await buildStorageProof(chain.rpc, { account: token, slots: [slot], blockNumber: block.number });
    const nodes = nodeCount(bundle.parts);
    for (const which of ["current", "recorded"] as const) {
      if (which === "recorded") {
        await chain.record();
        const later = await chain.latestBlock();
        await chain.reportBlock(later.number, later.timestamp, later.hash);
      }
      rows.push({
        operation: `devnet demo: ${label}, ${which} L1 block`,
        nodes,
        ...(await chain.bothVerifyBalance(token, holder.address, balancesSlot, bundle.parts, bundle.values[0])),
        atMost: 90_000n,
      });
    }
  }

  const deep = fixture<{ cases: DeepCase[] }>("deep-proofs.json").cases;
  const [party, marginal] = deep;
  const single = await chain.deepBalance(party, [0]);
  rows.push({ operation: `mainnet depth (${party.name}): one balance`, ...single, atMost: 120_000n });
  const absent = party.inputs.slots.findIndex(({ value }) => BigInt(value) === 0n);
  rows.push({ operation: `mainnet depth (${party.name}): a balance of 0 (exclusion)`, ...(await chain.deepBalance(party, [absent])) });
  const held = party.inputs.slots.flatMap(({ value }, i) => (BigInt(value) === 0n ? [] : [i]));
  const many = await chain.deepBalance(party, held);
  rows.push({ operation: `mainnet depth (${party.name}): verifyBalances, ${held.length} owners`, ...many });
  figures.push({
    figure: "each extra slot under one account proof",
    calldata: (many.calldata - single.calldata) / BigInt(held.length - 1),
    atMost: 35_000n,
  });
  const deeper = await chain.deepBalance(marginal, [0]);
  rows.push({ operation: `mainnet depth (${marginal.name}): one balance`, ...deeper });
  const addedNodes = BigInt(totalNodes(deeper.nodes) - totalNodes(single.nodes));
  figures.push({
    figure: `marginal cost per trie node (${deeper.nodes} vs ${single.nodes} nodes)`,
    bedrock: ("bedrock" in deeper && "bedrock" in single ? deeper.bedrock - single.bedrock : 0n) / addedNodes,
    calldata: (deeper.calldata - single.calldata) / addedNodes,
    atMost: 8_000n,
  });

  for (const real of fixture<{ cases: MainnetCase[] }>("mainnet-proofs.json").cases) {
    rows.push({ operation: `mainnet block ${real.block}: ${real.account.slice(0, 10)}…, one slot`, ...(await chain.mainnetSlot(real)) });
  }

  const history = await measureHistoryGas();
  rows.push({ operation: "anvil (Prague): current L1 block", nodes: history.nodes, calldata: history.current });
  rows.push({ operation: `anvil (Prague): ${HISTORY_DEPTH} blocks back, through EIP-2935`, nodes: history.nodes, calldata: history.back });
  figures.push({ figure: `history's extra, ${HISTORY_DEPTH} blocks back`, calldata: history.back - history.current, atMost: 100_000n });
  return { rows, figures };
}

/** The verifiers and the L1Block they read, on a chain that is both L1 and L2, and what the rows measure with them. */
async function deployVerifiers(provider: JsonRpcProvider, sender: Signer) {
  const l1BlockAddress = L2_PREDEPLOYS.L1Block;
  await provider
    .send("hardhat_setCode", [l1BlockAddress, opArtifact("L1Block").deployedBytecode])
    .catch(() => provider.send("anvil_setCode", [l1BlockAddress, opArtifact("L1Block").deployedBytecode]));
  await provider.send("hardhat_impersonateAccount", [DEPOSITOR]).catch(() => provider.send("anvil_impersonateAccount", [DEPOSITOR]));
  await provider
    .send("hardhat_setBalance", [DEPOSITOR, "0xde0b6b3a7640000"])
    .catch(() => provider.send("anvil_setBalance", [DEPOSITOR, "0xde0b6b3a7640000"]));
  const { default: hre } = await import("hardhat");
  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, sender).deploy(...args);
    await contract.waitForDeployment();
    return contract as Contract;
  };
  const hashes = await deploy("L1BlockHashes", [l1BlockAddress]);
  const verifier = await deploy("StorageProofVerifier", [await hashes.getAddress(), l1BlockAddress]);
  const bedrock = await deploy("BedrockStorageProofVerifier", [await hashes.getAddress(), l1BlockAddress]);
  const l1Block = new Contract(l1BlockAddress, opArtifact("L1Block").abi, await provider.getSigner(DEPOSITOR));
  const rpc = { request: <T>(method: string, params: unknown[]) => provider.send(method, params) as Promise<T> };

  const meter = await deploy("GasMeter", []);
  /**
   * The execution gas of `contract.functionName(...args)`, measured around the call by `GasMeter` (the access to
   * the cold verifier and the copy of the arguments included). Not a receipt less the intrinsic cost: under
   * EIP-7623 a proof's transaction pays the calldata floor, which would hide the verifier's work.
   */
  const executionGas = async (contract: Contract, functionName: string, args: unknown[]) => {
    const data = contract.interface.encodeFunctionData(functionName, args);
    return (await meter.getFunction("measure").staticCall(await contract.getAddress(), data)) as bigint;
  };

  /** The gas of the whole transaction that calls `contract.functionName(...args)`, as a wallet would send it. */
  const transactionGas = async (contract: Contract, functionName: string, args: unknown[]) => {
    const data = contract.interface.encodeFunctionData(functionName, args);
    const receipt = await (await sender.sendTransaction({ to: await contract.getAddress(), data })).wait();
    if (receipt === null || receipt.status !== 1) throw new Error(`${functionName} failed`);
    return receipt.gasUsed;
  };

  const chain = {
    rpc,
    async latestBlock() {
      const block = (await provider.send("eth_getBlockByNumber", ["latest", false])) as RpcBlock;
      return { number: BigInt(block.number), timestamp: BigInt(block.timestamp), hash: block.hash, rpc: block };
    },
    /** Makes `L1Block` report block `number` with `hash`, as the depositor does. */
    async reportBlock(number: bigint, timestamp: bigint, hash: string) {
      await (await l1Block.getFunction("setL1BlockValues").send(number, timestamp, 0n, hash, 0n, `0x${"00".repeat(32)}`, 0n, 0n)).wait();
    },
    async record() {
      await (await (hashes.connect(sender) as Contract).getFunction("record").send()).wait();
    },
    /** Both verifiers' `verifyBalance` of one proof, each checked to return `expected` before it is measured. */
    async bothVerifyBalance(token: string, owner: string, balancesSlot: bigint, parts: StorageProofParts, expected: bigint) {
      const encoded = encodeStorageProof(parts);
      const old = encodeAbiParameters(BEDROCK_PROOF, [
        { header: parts.header, accountProof: parts.accountProof, storageProof: parts.slotProofs[0].nodes },
      ]);
      for (const [contract, proof] of [
        [verifier, encoded],
        [bedrock, old],
      ] as const) {
        const [balance] = (await contract.getFunction("verifyBalance").staticCall(token, owner, balancesSlot, MAX_AGE, proof)) as [bigint];
        if (balance !== expected) throw new Error(`a measured proof of ${token} does not verify`);
      }
      const args = [token, owner, balancesSlot, MAX_AGE, encoded];
      return {
        calldata: await executionGas(verifier, "verifyBalance", args),
        bedrock: await executionGas(bedrock, "verifyBalance", [token, owner, balancesSlot, MAX_AGE, old]),
        transaction: await transactionGas(verifier, "verifyBalance", args),
      };
    },
    /** The deep fixture's balances of the owners at `indexes` (one: verifyBalance on both; more: verifyBalances). */
    async deepBalance(deepCase: DeepCase, indexes: number[]) {
      const { inputs, outputs } = deepCase;
      const header = await chain.syntheticHeader(outputs.stateRoot);
      const parts: StorageProofParts = {
        header,
        accountProof: outputs.accountProof,
        slotProofs: indexes.map((i) => ({ included: BigInt(inputs.slots[i].value) !== 0n, nodes: outputs.storageProofs[i] })),
        history: NO_HISTORY,
      };
      const nodes = `${outputs.accountProof.length}+${outputs.storageProofs[indexes[0]].length}`;
      const owners = indexes.map((i) => inputs.slots[i].owner);
      if (indexes.length > 1) {
        const args = [inputs.account, owners, OZ_ERC20_SLOT, MAX_AGE, encodeStorageProof(parts)];
        const [balances] = (await verifier.getFunction("verifyBalances").staticCall(...args)) as [bigint[]];
        if (balances.some((balance, i) => balance !== BigInt(inputs.slots[indexes[i]].value)))
          throw new Error("a deep proof does not verify");
        return { nodes, calldata: await executionGas(verifier, "verifyBalances", args) };
      }
      const expected = BigInt(inputs.slots[indexes[0]].value);
      if (expected === 0n) {
        const args = [inputs.account, owners[0], OZ_ERC20_SLOT, MAX_AGE, encodeStorageProof(parts)];
        const [balance] = (await verifier.getFunction("verifyBalance").staticCall(...args)) as [bigint];
        if (balance !== 0n) throw new Error("a deep exclusion proof does not verify");
        return { nodes, calldata: await executionGas(verifier, "verifyBalance", args) };
      }
      return { nodes, ...(await chain.bothVerifyBalance(inputs.account, owners[0], OZ_ERC20_SLOT, parts, expected)) };
    },
    /** A real mainnet proof of one slot, through `verifyStorage`. */
    async mainnetSlot(real: MainnetCase) {
      const parts: StorageProofParts = {
        header: await chain.syntheticHeader(real.stateRoot),
        accountProof: real.accountProof,
        slotProofs: [{ included: true, nodes: real.storageProof }],
        history: NO_HISTORY,
      };
      const args = [real.account, [real.storageKey], MAX_AGE, encodeStorageProof(parts)];
      const [values] = (await verifier.getFunction("verifyStorage").staticCall(...args)) as [string[]];
      if (BigInt(values[0]) !== BigInt(real.value)) throw new Error(`the mainnet proof of block ${real.block} does not verify`);
      return {
        nodes: `${real.accountProof.length}+${real.storageProof.length}`,
        calldata: await executionGas(verifier, "verifyStorage", args),
      };
    },
    /** The header of a block `L1Block` is made to report, carrying `stateRoot` (the fixtures' tries are not this chain's). */
    async syntheticHeader(stateRoot: Hex): Promise<Hex> {
      const block = await chain.latestBlock();
      const header = headerRlp({ ...block.rpc, stateRoot });
      await chain.reportBlock(block.number, block.timestamp, keccak256(header));
      return header;
    },
    executionGas,
    verifier,
  };
  return chain;
}

/**
 * On anvil (Prague's rules, EIP-2935's contract at genesis): one ERC-20 balance proven at `L1Block`'s current
 * block, then the same proof of a block `HISTORY_DEPTH` back, through the history contract at the current block.
 */
async function measureHistoryGas(): Promise<{ nodes: string; current: bigint; back: bigint }> {
  // Only recent states are kept: the old block's proof is read before the chain moves on, and mining is faster.
  const anvil = await startAnvil({ chainId: 31_337, pruneHistory: 64 });
  const provider = devnetProvider(anvil.rpcUrl, 31_337);
  try {
    const sender = new NonceManager(new Wallet(devAccount(0).privateKey, provider));
    const chain = await deployVerifiers(provider, sender);
    const holder = devAccount(1).address;
    const { default: hre } = await import("hardhat");
    const artifact = await hre.artifacts.readArtifact("PlainERC20");
    const token = await new ContractFactory(artifact.abi, artifact.bytecode, sender).deploy(holder, 10n ** 24n);
    await token.waitForDeployment();
    const slot = balanceSlotKey(holder, OZ_ERC20_SLOT);
    const old = await chain.latestBlock();
    const oldProof = await buildStorageProof(chain.rpc, { account: await token.getAddress(), slots: [slot], blockNumber: old.number });
    await provider.send("anvil_mine", [`0x${HISTORY_DEPTH.toString(16)}`]);
    const anchor = await chain.latestBlock();
    await chain.reportBlock(anchor.number, anchor.timestamp, anchor.hash);
    const current = await buildStorageProof(chain.rpc, { account: await token.getAddress(), slots: [slot], blockNumber: anchor.number });
    const { history } = await buildHistoryProof(chain.rpc, { ...oldProof, anchorBlockNumber: anchor.number });
    const measure = async (parts: StorageProofParts) => {
      const args = [await token.getAddress(), holder, OZ_ERC20_SLOT, 86_400n, encodeStorageProof(parts)];
      const [balance] = (await chain.verifier.getFunction("verifyBalance").staticCall(...args)) as [bigint];
      if (balance !== 10n ** 24n) throw new Error("the history benchmark's proof does not verify");
      return chain.executionGas(chain.verifier, "verifyBalance", args);
    };
    return {
      nodes: nodeCount(current.parts),
      current: await measure(current.parts),
      back: await measure({ ...oldProof.parts, history }),
    };
  } finally {
    provider.destroy();
    await anvil.stop();
  }
}

function nodeCount(parts: StorageProofParts): string {
  return `${parts.accountProof.length}+${parts.slotProofs[0].nodes.length}`;
}

function totalNodes(nodes: string): number {
  return nodes.split("+").reduce((sum, count) => sum + Number(count), 0);
}

/** The rows beside each other (Bedrock, new, ratio, bar), then the derived figures against their bars. */
export function formatProofTable({ rows, figures }: ProofGasReport): string {
  const number = (value: bigint | undefined) => (value === undefined ? "—" : value.toLocaleString("en-US"));
  const bar = (value: bigint, atMost: bigint | undefined) =>
    atMost === undefined ? "" : `${value <= atMost ? "ok" : "OVER"} (<= ${atMost.toLocaleString("en-US")})`;
  const lines = [
    "storage proofs: execution gas, Bedrock's verifier (old) and the calldata walk (new), same run",
    `${"operation".padEnd(64)} ${"nodes".padStart(6)} ${"old".padStart(9)} ${"new".padStart(9)} ${"new/old".padStart(8)} ${"new tx".padStart(9)}  bar`,
    ...rows.map(
      (row) =>
        `${row.operation.padEnd(64)} ${row.nodes.padStart(6)} ${number(row.bedrock).padStart(9)} ${number(row.calldata).padStart(9)} ` +
        `${(row.bedrock === undefined ? "—" : (Number(row.calldata) / Number(row.bedrock)).toFixed(2)).padStart(8)} ` +
        `${number(row.transaction).padStart(9)}  ${bar(row.calldata, row.atMost)}`,
    ),
    ...figures.map(
      (figure) =>
        `${figure.figure.padEnd(64)} ${"".padStart(6)} ${number(figure.bedrock).padStart(9)} ${number(figure.calldata).padStart(9)} ` +
        `${"".padStart(8)} ${"".padStart(9)}  ${bar(figure.calldata, figure.atMost)}`,
    ),
    "old, new: execution gas of the call (GasMeter); new tx: the whole transaction's gas, calldata and its EIP-7623 floor included",
  ];
  return lines.join("\n");
}
