import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

import { expect } from "chai";
import {
  AbiCoder,
  type BaseContract,
  Contract,
  ContractFactory,
  type ErrorDescription,
  getBytes,
  hexlify,
  type JsonRpcProvider,
  type Signer,
  toBeHex,
  Wallet,
  zeroPadValue,
} from "ethers";
import hre from "hardhat";

import { keccak256, type Hex } from "viem";

import {
  balanceSlotKey,
  buildBalanceProof,
  buildHistoryProof,
  buildStorageProof,
  encodeBlockHeader,
  encodeStorageProof,
  headerRlp,
  HISTORY_CONTRACT,
  type RpcBlock,
} from "../../../src/chains/evm/balance-proof.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { oneChainAsL1AndL2, reportL1Block, reportOwnBlock } from "../../helpers/one-chain-l1.ts";
import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";

const require = createRequire(import.meta.url);

const L1_BLOCK = L2_PREDEPLOYS.L1Block;
/** Generous enough for every proof in a run; the stale-header test picks its own. */
const MAX_AGE = 86_400n;
/** The balances mapping slots: OpenZeppelin's ERC20 `_balances` is its first variable; ERC721 has `_name`,
 * `_symbol`, `_owners` before `_balances`; the offset mock has an owner and a total supply before it. */
const OZ_ERC20_SLOT = 0n;
const OZ_ERC721_SLOT = 3n;
const OFFSET_SLOT = 2n;
const ERC20_SUPPLY = 2n ** 80n + 12_345n;
const PROXIED_SUPPLY = 777n * 10n ** 18n;
const OFFSET_SUPPLY = 31_337n;
const NFT_COUNT = 3n;

/** EIP-2935's runtime code, as published (keccak256 0x6e49e667…0a5d, which the verifier checks). */
const EIP_2935_CODE =
  "0x3373fffffffffffffffffffffffffffffffffffffffe14604657602036036042575f35600143038111604257611fff81430311604257611fff9006545f5260205ff35b5f5ffd5b5f35611fff60014303065500";

/** `IStorageProofVerifier.StorageProof`, for ethers' coder. */
const STORAGE_PROOF_TYPE =
  "tuple(bytes header, bytes[] accountProof, tuple(bool included, bytes[] nodes)[] slotProofs, tuple(bytes anchorHeader, bytes[] accountProof, bytes[] slotProof) history)";

/** Whether the first slot proof of an encoded proof claims inclusion. */
function claimOf(encoded: string): boolean {
  const [proof] = AbiCoder.defaultAbiCoder().decode([STORAGE_PROOF_TYPE], encoded);
  return proof.slotProofs[0].included as boolean;
}

/** The encoded proof with its first slot proof's claim set to `included`. */
function withClaim(encoded: string, included: boolean): string {
  const [proof] = AbiCoder.defaultAbiCoder().decode([STORAGE_PROOF_TYPE], encoded);
  const slotProofs = proof.slotProofs.map((slot: { nodes: string[] }, i: number) => [
    i === 0 ? included : claimOf(encoded),
    [...slot.nodes],
  ]);
  return AbiCoder.defaultAbiCoder().encode(
    [STORAGE_PROOF_TYPE],
    [
      [
        proof.header,
        [...proof.accountProof],
        slotProofs,
        [proof.history.anchorHeader, [...proof.history.accountProof], [...proof.history.slotProof]],
      ],
    ],
  );
}

const rpcOf = (provider: JsonRpcProvider) => ({
  request: <T>(method: string, params: unknown[]) => provider.send(method, params) as Promise<T>,
});

/** The custom error a call reverted with, decoded with `contract`'s ABI. */
async function revertOf(call: Promise<unknown>, contract: BaseContract): Promise<ErrorDescription> {
  try {
    await call;
  } catch (error) {
    const data = (error as { data?: string }).data;
    const parsed = data === undefined ? null : contract.interface.parseError(data);
    if (parsed === null) throw error;
    return parsed;
  }
  throw new Error("the call did not revert");
}

/** The in-process chain that plays both L1 and L2 (`oneChainAsL1AndL2`), and its first account. */
async function inProcessChain(): Promise<{ provider: JsonRpcProvider; deployer: Signer }> {
  const { provider, signers } = await oneChainAsL1AndL2();
  return { provider, deployer: signers[0] };
}

describe("StorageProofVerifier: storage proofs against an L1 block hash (one chain as L1 and L2)", function () {
  this.timeout(300_000);
  let provider: JsonRpcProvider;
  let deployer: Signer;
  let verifier: Contract;
  let hashes: Contract;
  const tokens = { erc20: "", erc721: "", proxied: "", offset: "" };
  const holder = Wallet.createRandom().address;
  const nobody = Wallet.createRandom().address;

  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await contract.waitForDeployment();
    return contract as Contract;
  };

  /** Makes the test `L1Block` report L1 block `number` of this same chain (or the `hash` given), as the depositor does on an OP chain. */
  const setL1Block = (number: bigint, hash?: string) => reportOwnBlock(provider, number, hash);

  async function latest(): Promise<bigint> {
    return BigInt(await provider.getBlockNumber());
  }

  /** A proof of `owner`'s slot in `token` at the latest block, which the L1Block is then made to report. */
  async function freshProof(token: string, owner: string, balancesSlot: bigint) {
    const blockNumber = await latest();
    await setL1Block(blockNumber);
    return buildBalanceProof(rpcOf(provider), { token, owner, balancesSlot, blockNumber });
  }

  before(async function () {
    ({ provider, deployer } = await inProcessChain());

    tokens.erc20 = await (await deploy("PlainERC20", [holder, ERC20_SUPPLY])).getAddress();
    tokens.erc721 = await (await deploy("PlainERC721", [holder, NFT_COUNT])).getAddress();
    const implementation = await deploy("InitializableERC20", []);
    const init = implementation.interface.encodeFunctionData("initialize", [holder, PROXIED_SUPPLY]);
    tokens.proxied = await (await deploy("StorageProofTokenProxy", [await implementation.getAddress(), init])).getAddress();
    tokens.offset = await (await deploy("OffsetBalancesERC20", [holder, OFFSET_SUPPLY])).getAddress();

    hashes = await deploy("L1BlockHashes", [L1_BLOCK]);
    verifier = await deploy("StorageProofVerifier", [await hashes.getAddress(), L1_BLOCK]);
  });
  it("keeps, as the reference, a verifier compiled by solc 0.8.15 with Bedrock's trie and RLP libraries as installed", async function () {
    const { buildInfoId } = await hre.artifacts.readArtifact("BedrockStorageProofVerifier");
    const buildInfoPath = await hre.artifacts.getBuildInfoPath(buildInfoId!);
    const buildInfo = JSON.parse(readFileSync(buildInfoPath!, "utf8")) as {
      solcVersion: string;
      input: { sources: Record<string, { content: string }> };
    };
    expect(buildInfo.solcVersion).to.equal("0.8.15");
    const bedrock = path.dirname(require.resolve("@eth-optimism/contracts-bedrock/package.json"));
    const prefix = "npm/@eth-optimism/contracts-bedrock@0.17.3/";
    const files = ["Bytes.sol", "rlp/RLPErrors.sol", "rlp/RLPReader.sol", "trie/MerkleTrie.sol", "trie/SecureMerkleTrie.sol"];
    expect(Object.keys(buildInfo.input.sources).filter((name) => name.startsWith(prefix))).to.have.members(
      files.map((file) => `${prefix}src/libraries/${file}`),
    );
    for (const file of files) {
      const content = buildInfo.input.sources[`${prefix}src/libraries/${file}`].content;
      expect(content, file).to.equal(readFileSync(path.join(bedrock, "src/libraries", file), "utf8"));
    }
  });

  it("agrees with the Bedrock reference it replaced on every holding; GasMeter measures a call and passes a failure on", async function () {
    const bedrock = await deploy("BedrockStorageProofVerifier", [await hashes.getAddress(), L1_BLOCK]);
    const meter = await deploy("GasMeter", []);
    const oldEncoding = (parts: { header: Hex; accountProof: Hex[]; slotProofs: Array<{ nodes: Hex[] }> }) =>
      AbiCoder.defaultAbiCoder().encode(
        ["tuple(bytes header, bytes[] accountProof, bytes[] storageProof)"],
        [[parts.header, parts.accountProof, parts.slotProofs[0].nodes]],
      );
    for (const [token, slot, expected] of [
      [tokens.erc20, OZ_ERC20_SLOT, ERC20_SUPPLY],
      [tokens.erc721, OZ_ERC721_SLOT, NFT_COUNT],
      [tokens.offset, OFFSET_SLOT, OFFSET_SUPPLY],
    ] as const) {
      const blockNumber = await latest();
      await setL1Block(blockNumber);
      const { parts } = await buildStorageProof(rpcOf(provider), { account: token, slots: [balanceSlotKey(holder, slot)], blockNumber });
      const args = [token, holder, slot, MAX_AGE];
      const [oldBalance, oldBlock] = await bedrock.verifyBalance(...args, oldEncoding(parts));
      const [newBalance, newBlock] = await verifier.verifyBalance(...args, encodeStorageProof(parts));
      expect([oldBalance, oldBlock, newBalance, newBlock]).to.deep.equal([expected, blockNumber, expected, blockNumber]);
      // The meter (bench:gas measures with it; gas figures belong there, not in tests) gives one figure per call.
      const data = verifier.interface.encodeFunctionData("verifyBalance", [...args, encodeStorageProof(parts)]);
      const measure = () => meter.getFunction("measure").staticCall(verifier.getAddress(), data) as Promise<bigint>;
      const first = await measure();
      expect([first > 21_000n, await measure()]).to.deep.equal([true, first]);
    }
    // The reference proves inclusion only: a non-holder's slot has no proof there, and it says so.
    const { parts } = await buildStorageProof(rpcOf(provider), {
      account: tokens.erc20,
      slots: [balanceSlotKey(nobody, OZ_ERC20_SLOT)],
      blockNumber: await latest(),
    });
    await setL1Block(await latest());
    const refused = await revertOf(bedrock.verifyBalance(tokens.erc20, nobody, OZ_ERC20_SLOT, MAX_AGE, oldEncoding(parts)), bedrock);
    expect(refused.name).to.be.oneOf(["BedrockStorageProofVerifier_SlotNotProven", "BedrockStorageProofVerifier_UnknownBlock"]);
    expect((await revertOf(bedrock.verifyBalance(tokens.erc20, nobody, 0n, MAX_AGE, "0x1234"), bedrock)).name).to.equal(
      "BedrockStorageProofVerifier_MalformedProof",
    );
    // The meter passes a failed call's reason on.
    const failed = await revertOf(
      meter
        .getFunction("measure")
        .staticCall(
          await verifier.getAddress(),
          verifier.interface.encodeFunctionData("verifyBalance", [tokens.erc20, nobody, 0n, MAX_AGE, "0x1234"]),
        ),
      meter,
    );
    expect(verifier.interface.parseError(failed.args[0] as string)?.name).to.equal("StorageProofVerifier_MalformedProof");
  });

  it("rebuilds the block header whose keccak256 is the block's hash, and refuses one it cannot", async function () {
    const block = (await provider.send("eth_getBlockByNumber", ["latest", false])) as RpcBlock;
    expect(encodeBlockHeader(block)).to.match(/^0x[0-9a-f]+$/);
    expect(() => encodeBlockHeader({ ...block, requestsHash: undefined, parentBeaconBlockRoot: undefined })).to.throw(
      /a header format this code does not know/,
    );
  });

  for (const [name, slot, expected] of [
    ["an OpenZeppelin ERC-20 (slot 0)", OZ_ERC20_SLOT, ERC20_SUPPLY],
    ["an OpenZeppelin ERC-721 (slot 3)", OZ_ERC721_SLOT, NFT_COUNT],
    ["an ERC-20 behind an ERC1967 proxy (the proxy's slot 0)", OZ_ERC20_SLOT, PROXIED_SUPPLY],
    ["an ERC-20 whose balances mapping is at slot 2", OFFSET_SLOT, OFFSET_SUPPLY],
  ] as const) {
    it(`verifies a holder's balance of ${name} to balanceOf at the proven block`, async function () {
      const token = name.includes("ERC-721")
        ? tokens.erc721
        : name.includes("proxy")
          ? tokens.proxied
          : name.includes("slot 2")
            ? tokens.offset
            : tokens.erc20;
      const proof = await freshProof(token, holder, slot);
      expect(proof.value).to.equal(expected);
      expect(proof.storageKey).to.equal(balanceSlotKey(holder, slot));
      const [balance, l1BlockNumber] = await verifier.verifyBalance(token, holder, slot, MAX_AGE, proof.encoded);
      const balanceOf = new Contract(token, ["function balanceOf(address) view returns (uint256)"], provider);
      expect(balance).to.equal(await balanceOf.balanceOf(holder, { blockTag: Number(proof.blockNumber) }));
      expect(balance).to.equal(expected);
      expect(l1BlockNumber).to.equal(proof.blockNumber);
    });
  }

  it("verifies a non-holder's balance of 0 with an exclusion proof (an unwritten slot)", async function () {
    const proof = await freshProof(tokens.erc20, nobody, OZ_ERC20_SLOT);
    expect(proof.value).to.equal(0n);
    expect(claimOf(proof.encoded)).to.equal(false);
    const [balance, l1BlockNumber] = await verifier.verifyBalance(tokens.erc20, nobody, OZ_ERC20_SLOT, MAX_AGE, proof.encoded);
    expect([balance, l1BlockNumber]).to.deep.equal([0n, proof.blockNumber]);
  });

  it("refuses an exclusion proof presented as an inclusion, and an inclusion presented as an exclusion", async function () {
    const absent = await freshProof(tokens.erc20, nobody, OZ_ERC20_SLOT);
    let error = await revertOf(
      verifier.verifyBalance(tokens.erc20, nobody, OZ_ERC20_SLOT, MAX_AGE, withClaim(absent.encoded, true)),
      verifier,
    );
    expect([error.name, error.args[0], error.args[1], error.args[2]]).to.deep.equal([
      "StorageProofVerifier_InclusionClaimMismatch",
      tokens.erc20,
      balanceSlotKey(nobody, OZ_ERC20_SLOT),
      true,
    ]);
    const present = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    error = await revertOf(
      verifier.verifyBalance(tokens.erc20, holder, OZ_ERC20_SLOT, MAX_AGE, withClaim(present.encoded, false)),
      verifier,
    );
    expect([error.name, error.args[2]]).to.deep.equal(["StorageProofVerifier_InclusionClaimMismatch", false]);
  });

  it("never reads a proof for another slot index or another owner as theirs: the verifier derives the key itself", async function () {
    const proof = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    for (const [owner, slot] of [
      [holder, 1n],
      [holder, 2n],
      [nobody, OZ_ERC20_SLOT],
      [devAccount(0).address, OZ_ERC20_SLOT],
    ] as const) {
      // As built (an inclusion proof of the holder's slot): refused for any other key.
      const error = await revertOf(verifier.verifyBalance(tokens.erc20, owner, slot, MAX_AGE, proof.encoded), verifier);
      expect(error.name, `${owner} slot ${slot}`).to.be.oneOf([
        "StorageProofVerifier_SlotProofInvalid",
        "StorageProofVerifier_InclusionClaimMismatch",
      ]);
      // Its claim turned into exclusion: the path to the holder's leaf may prove another key absent, which is then
      // true (the key's slot is empty at that block); it never yields a balance the slot does not hold.
      try {
        const [balance] = await verifier.verifyBalance(tokens.erc20, owner, slot, MAX_AGE, withClaim(proof.encoded, false));
        const stored = await provider.getStorage(tokens.erc20, balanceSlotKey(owner, slot), Number(proof.blockNumber));
        expect([balance, BigInt(stored)], `${owner} slot ${slot}`).to.deep.equal([0n, 0n]);
      } catch (failure) {
        if ((failure as Error).name === "AssertionError") throw failure;
        const parsed = verifier.interface.parseError((failure as { data: string }).data);
        expect(parsed?.name).to.equal("StorageProofVerifier_SlotProofInvalid");
      }
    }
  });

  it("verifies several owners under one account proof (verifyBalances), and any slots (verifyStorage)", async function () {
    const blockNumber = await latest();
    await setL1Block(blockNumber);
    const owners = [holder, nobody, devAccount(3).address];
    const slots = owners.map((owner) => balanceSlotKey(owner, OZ_ERC20_SLOT));
    const bundle = await buildStorageProof(rpcOf(provider), { account: tokens.erc20, slots, blockNumber });
    expect(bundle.values).to.deep.equal([ERC20_SUPPLY, 0n, 0n]);
    const [balances, l1BlockNumber] = await verifier.verifyBalances(tokens.erc20, owners, OZ_ERC20_SLOT, MAX_AGE, bundle.encoded);
    expect([[...balances], l1BlockNumber]).to.deep.equal([[ERC20_SUPPLY, 0n, 0n], blockNumber]);
    const error = await revertOf(
      verifier.verifyBalances(tokens.erc20, owners.slice(0, 2), OZ_ERC20_SLOT, MAX_AGE, bundle.encoded),
      verifier,
    );
    expect([error.name, ...error.args]).to.deep.equal(["StorageProofVerifier_SlotCountMismatch", 2n, 3n]);
    // OpenZeppelin's ERC20 keeps _totalSupply at slot 2.
    const totalSupplySlot = zeroPadValue(toBeHex(2n), 32) as Hex;
    const supply = await buildStorageProof(rpcOf(provider), { account: tokens.erc20, slots: [totalSupplySlot], blockNumber });
    const [values] = await verifier.verifyStorage(tokens.erc20, [totalSupplySlot], MAX_AGE, supply.encoded);
    expect([...values]).to.deep.equal([zeroPadValue(toBeHex(ERC20_SUPPLY), 32)]);
  });

  it("refuses another token's account proof with AccountProofInvalid", async function () {
    const proof = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    const error = await revertOf(verifier.verifyBalance(tokens.offset, holder, OZ_ERC20_SLOT, MAX_AGE, proof.encoded), verifier);
    expect(error.name).to.equal("StorageProofVerifier_AccountProofInvalid");
    expect(error.args[0]).to.equal(tokens.offset);
  });

  it("refuses a header older than maxAge with StaleHeader, and accepts it within maxAge", async function () {
    const proof = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    await provider.send("evm_increaseTime", [600]);
    await provider.send("evm_mine", []);
    const error = await revertOf(verifier.verifyBalance(tokens.erc20, holder, OZ_ERC20_SLOT, 300n, proof.encoded), verifier);
    expect(error.name).to.equal("StorageProofVerifier_StaleHeader");
    expect((await verifier.verifyBalance(tokens.erc20, holder, OZ_ERC20_SLOT, 3_600n, proof.encoded))[0]).to.equal(ERC20_SUPPLY);
  });

  it("refuses a block the L2 does not know (not current, not recorded) with UnknownBlock", async function () {
    const proof = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    await setL1Block(await latest()); // the L1Block moves on; the proven block was never recorded
    const error = await revertOf(verifier.verifyBalance(tokens.erc20, holder, OZ_ERC20_SLOT, MAX_AGE, proof.encoded), verifier);
    expect(error.name).to.equal("StorageProofVerifier_UnknownBlock");
    expect(error.args[0]).to.equal(proof.blockNumber);
  });

  it("refuses a header whose hash is not the one the L2 knows for its number with HeaderHashMismatch", async function () {
    const proof = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    const forged = hexlify(Uint8Array.from({ length: 32 }, (_, i) => i + 1));
    await setL1Block(proof.blockNumber, forged);
    const error = await revertOf(verifier.verifyBalance(tokens.erc20, holder, OZ_ERC20_SLOT, MAX_AGE, proof.encoded), verifier);
    expect(error.name).to.equal("StorageProofVerifier_HeaderHashMismatch");
    expect(error.args[1]).to.equal(forged);
    expect(error.args[2]).to.equal(proof.blockHash);
  });

  it("verifies an older block once record() kept its hash, records each block once, and names the latest record", async function () {
    const proof = await freshProof(tokens.erc721, holder, OZ_ERC721_SLOT);
    const recorder = hashes.connect(deployer) as Contract;
    const recorded = async () => {
      const receipt = await (await recorder.record()).wait();
      return receipt.logs.map((log: { topics: string[]; data: string }) => hashes.interface.parseLog(log)!);
    };
    const [event] = await recorded();
    const block = (await provider.getBlock(proof.blockNumber))!;
    expect([event.name, ...event.args]).to.deep.equal(["L1BlockRecorded", proof.blockNumber, proof.blockHash, BigInt(block.timestamp)]);
    expect(await recorded()).to.deep.equal([]); // the same block again: nothing changes, nothing is emitted
    // The latest record is what the API answers proofs at: it stays verifiable once L1Block moves on.
    expect([...(await hashes.latest())]).to.deep.equal([proof.blockNumber, proof.blockHash, BigInt(block.timestamp)]);
    await setL1Block(await latest());
    expect((await hashes.hashOf(proof.blockNumber))[0]).to.equal(proof.blockHash);
    const [balance, l1BlockNumber] = await verifier.verifyBalance(tokens.erc721, holder, OZ_ERC721_SLOT, MAX_AGE, proof.encoded);
    expect([balance, l1BlockNumber]).to.deep.equal([NFT_COUNT, proof.blockNumber]);
  });

  it("names a malformed encoding and a malformed header", async function () {
    const proof = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    expect((await revertOf(verifier.verifyBalance(tokens.erc20, holder, 0n, MAX_AGE, "0x1234"), verifier)).name).to.equal(
      "StorageProofVerifier_MalformedProof",
    );
    const garbage = AbiCoder.defaultAbiCoder().encode([STORAGE_PROOF_TYPE], [["0xc0", [], [], ["0x", [], []]]]);
    expect((await revertOf(verifier.verifyBalance(tokens.erc20, holder, 0n, MAX_AGE, garbage), verifier)).name).to.equal(
      "StorageProofVerifier_MalformedHeader",
    );
    // A length or count word asking for more memory than exists: the decoder panics (0x41) before it checks
    // bounds; still the encoding that is malformed, not the header.
    const bytes = getBytes(proof.encoded);
    const word = (at: number) => BigInt(hexlify(bytes.slice(at, at + 32)));
    const tuple = 32;
    const withWord = (at: number, value: bigint) => {
      const changed = Uint8Array.from(bytes);
      changed.set(getBytes(zeroPadValue(toBeHex(value), 32)), at);
      return hexlify(changed);
    };
    for (const [what, at, value] of [
      ["the header's length", tuple + Number(word(tuple)), 2n ** 64n],
      ["the account proof's count", tuple + Number(word(tuple + 32)), 2n ** 59n],
      ["the slot proofs' count", tuple + Number(word(tuple + 64)), 2n ** 59n],
      ["the history's offset", tuple + 96, BigInt(bytes.length)],
    ] as const) {
      const error = await revertOf(verifier.verifyBalance(tokens.erc20, holder, OZ_ERC20_SLOT, MAX_AGE, withWord(at, value)), verifier);
      expect(error.name, what).to.equal("StorageProofVerifier_MalformedProof");
    }
    expect(proof.value).to.equal(ERC20_SUPPLY);
  });

  it("never yields another balance from a proof with any one byte corrupted", async function () {
    const proof = await freshProof(tokens.erc20, holder, OZ_ERC20_SLOT);
    const bytes = getBytes(proof.encoded);
    const outcomes = { reverted: 0, sameBalance: 0 };
    const names = new Set<string>();
    // Every position, each XORed with a byte that differs per position (never 0): header, both proofs, ABI heads.
    const positions = Array.from(bytes.keys());
    for (let start = 0; start < positions.length; start += 64) {
      await Promise.all(
        positions.slice(start, start + 64).map(async (position) => {
          const corrupted = Uint8Array.from(bytes);
          corrupted[position] ^= ((position * 37) % 255) + 1;
          try {
            const [balance] = await verifier.verifyBalance(tokens.erc20, holder, OZ_ERC20_SLOT, MAX_AGE, hexlify(corrupted));
            expect(balance, `position ${position}`).to.equal(ERC20_SUPPLY);
            outcomes.sameBalance += 1;
          } catch (error) {
            if ((error as Error).name === "AssertionError") throw error;
            const data = (error as { data?: string }).data;
            const parsed = data === undefined ? null : verifier.interface.parseError(data);
            expect(parsed, `position ${position}: an unnamed revert`).not.to.equal(null);
            names.add(parsed!.name);
            outcomes.reverted += 1;
          }
        }),
      );
    }
    console.log(
      `      ${bytes.length} positions: ${outcomes.reverted} reverted (${[...names].sort().join(", ")}), ${outcomes.sameBalance} same balance`,
    );
    expect(outcomes.reverted).to.be.greaterThan(bytes.length / 2);
  });
});

describe("StorageProofVerifier: history proofs through EIP-2935's contract", function () {
  this.timeout(300_000);
  let provider: JsonRpcProvider;
  let verifier: Contract;
  let token: string;
  const holder = Wallet.createRandom().address;
  const slot = balanceSlotKey(holder, OZ_ERC20_SLOT);

  before(async function () {
    let deployer: Signer;
    ({ provider, deployer } = await inProcessChain());
    // The in-process network has no EIP-2935 contract of its own (anvil, the devnet's L1, has it at genesis
    // and writes it every block: test/ts/api/BalanceProofs.ts and npm run bench:gas prove through it). Here it
    // is installed at its address with its published code, and `recordHash` does its system write.
    await provider.send("hardhat_setCode", [HISTORY_CONTRACT, EIP_2935_CODE]);
    const deploy = async (name: string, args: unknown[]) => {
      const artifact = await hre.artifacts.readArtifact(name);
      const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
      await contract.waitForDeployment();
      return contract as Contract;
    };
    token = await (await deploy("PlainERC20", [holder, ERC20_SUPPLY])).getAddress();
    const hashes = await deploy("L1BlockHashes", [L1_BLOCK]);
    verifier = await deploy("StorageProofVerifier", [await hashes.getAddress(), L1_BLOCK]);
  });
  /** EIP-2935's system write: block `number`'s hash into slot `number % 8191`, as the protocol does a block later. */
  async function recordHash(number: bigint) {
    const block = (await provider.getBlock(number))!;
    await provider.send("hardhat_setStorageAt", [HISTORY_CONTRACT, toBeHex(number % 8191n, 32), block.hash]);
  }

  /** Makes `L1Block` report L1 block `number`, `timestamp` and `hash`, as the depositor does (mining a block). */
  const reportL1BlockValues = (number: bigint, timestamp: number, hash: string) => reportL1Block(provider, number, timestamp, hash);
  /** Makes `L1Block` report block `number` of this chain. */
  const setL1Block = (number: bigint) => reportOwnBlock(provider, number);
  const latest = async () => BigInt(await provider.getBlockNumber());
  const proofAt = async (blockNumber: bigint) => buildStorageProof(rpcOf(provider), { account: token, slots: [slot], blockNumber });

  it("verifies a block 8,191 before its anchor, and refuses 8,192 before with HistoryOutOfRange", async function () {
    // The anchor is block X's real header and state (its history contract holds X - 1's hash) under the number
    // X + 8,190, which L1Block is made to report, as the L2 would 8,190 blocks later: mining 8,192 blocks under
    // Prague's rules takes anvil 1.7.1 about 30 s alone, several times that beside the rest of the suite.
    // `npm run bench:gas` proves a block 8,000 back on an anvil that mined them.
    await provider.send("hardhat_mine", ["0x2"]);
    const tooOld = await proofAt((await latest()) - 1n);
    const oldest = await proofAt(await latest());
    await recordHash(oldest.blockNumber);
    await recordHash(tooOld.blockNumber);
    await provider.send("hardhat_mine", ["0x1"]);
    const x = await latest();
    const { history } = await buildHistoryProof(rpcOf(provider), { ...oldest, anchorBlockNumber: x });
    const anchorNumber = x + 8190n;
    const anchorHeader = headerRlp({
      ...((await provider.send("eth_getBlockByNumber", [toBeHex(x), false])) as RpcBlock),
      number: toBeHex(anchorNumber) as Hex,
    });
    await reportL1BlockValues(anchorNumber, (await provider.getBlock(x))!.timestamp, keccak256(anchorHeader));
    const anchored = { ...history, anchorHeader };
    expect(anchorNumber - oldest.blockNumber).to.equal(8191n);

    const [balance, l1BlockNumber] = await verifier.verifyBalance(
      token,
      holder,
      OZ_ERC20_SLOT,
      MAX_AGE,
      encodeStorageProof({ ...oldest.parts, history: anchored }),
    );
    expect([balance, l1BlockNumber]).to.deep.equal([ERC20_SUPPLY, oldest.blockNumber]);
    const error = await revertOf(
      verifier.verifyBalance(token, holder, OZ_ERC20_SLOT, MAX_AGE, encodeStorageProof({ ...tooOld.parts, history: anchored })),
      verifier,
    );
    expect([error.name, ...error.args]).to.deep.equal(["StorageProofVerifier_HistoryOutOfRange", tooOld.blockNumber, anchorNumber]);
    await expectRejection(
      buildHistoryProof(rpcOf(provider), { ...tooOld, anchorBlockNumber: tooOld.blockNumber + 8192n }),
      /not among the 8191 blocks/,
    );
  });

  it("verifies a block two back through the real anchor; refuses another block's header, and an account without EIP-2935's code", async function () {
    const proven = await proofAt(await latest());
    await recordHash(proven.blockNumber);
    await provider.send("hardhat_mine", ["0x2"]);
    const anchor = await latest();
    await setL1Block(anchor);
    const { history } = await buildHistoryProof(rpcOf(provider), { ...proven, anchorBlockNumber: anchor });
    // The real anchor, two blocks later: the proof verifies to the old block.
    const [, provenNumber] = await verifier.verifyBalance(
      token,
      holder,
      OZ_ERC20_SLOT,
      MAX_AGE,
      encodeStorageProof({ ...proven.parts, history }),
    );
    expect(provenNumber).to.equal(proven.blockNumber);
    // The history proof of `proven`'s slot, under another block's header (one ahead, so a different slot):
    const later = await proofAt(anchor - 1n);
    let error = await revertOf(
      verifier.verifyBalance(token, holder, OZ_ERC20_SLOT, MAX_AGE, encodeStorageProof({ ...later.parts, history })),
      verifier,
    );
    expect(error.name).to.be.oneOf(["StorageProofVerifier_SlotProofInvalid", "StorageProofVerifier_HistoryHashMismatch"]);

    // The same storage under other code is not the history contract.
    await provider.send("hardhat_setCode", [HISTORY_CONTRACT, "0x00"]);
    await provider.send("hardhat_mine", ["0x1"]);
    const anchorAfter = await latest();
    await setL1Block(anchorAfter);
    const swapped = await buildHistoryProof(rpcOf(provider), { ...proven, anchorBlockNumber: anchorAfter });
    error = await revertOf(
      verifier.verifyBalance(token, holder, OZ_ERC20_SLOT, MAX_AGE, encodeStorageProof({ ...proven.parts, history: swapped.history })),
      verifier,
    );
    expect(error.name).to.equal("StorageProofVerifier_HistoryContractMismatch");
  });
});

/** Expects `promise` to reject with a message matching `pattern`. */
async function expectRejection(promise: Promise<unknown>, pattern: RegExp) {
  let failure: unknown;
  try {
    await promise;
  } catch (error) {
    failure = error;
  }
  expect(failure, "a rejection").to.be.instanceOf(Error);
  expect((failure as Error).message).to.match(pattern);
}
