import { encodeErrorResult, encodeFunctionData, erc20Abi, erc721Abi, pad, parseAbi, zeroAddress, type Hex } from "viem";
import { describe, expect, it } from "vitest";

import type { NetworkConfig } from "@avn/protocol/network-config";
import { knownContracts } from "../src/explorer/abis";
import { decodedText, decodeInput, decodeLog, decodeRevert } from "../src/explorer/decode";
import { jobStory, type JobEvent } from "../src/explorer/job";
import { parseSearch } from "../src/explorer/search";
import { nodeRegistryAbi, verificationRegistryAbi } from "../src/generated/abis";
import { l2ToL1MessagePasserAbi } from "../src/generated/op-abis";
import { encodedLog } from "./encoded-log";
import { address } from "./governance-fixtures";

const REGISTRY = address(0x54);
const OWNER = address(0x0a);
const TOKEN = address(0xa5);

/** A deployment's configuration with distinct addresses, as `/config.json` gives it. */
const config = {
  name: "test",
  l1: { chainId: 900, name: "L1", rpcUrl: "http://l1", fromBlock: 0, blockSeconds: 2 },
  l2: { chainId: 901, name: "L2", rpcUrl: "http://l2", fromBlock: 0 },
  contracts: {
    l1: { PrimaryToken: address(0x11), OptimismPortal: address(0x12), L2OutputOracle: address(0x13), L1StandardBridge: address(0x14) },
    l2: {
      PrimaryToken: address(0x21),
      StakedToken: address(0x22),
      NodeLicense: address(0x23),
      NodeRegistry: address(0x24),
      VerificationRegistry: REGISTRY,
    },
  },
} as NetworkConfig;
const known = knownContracts(config);

describe("the explorer's decoding", () => {
  it("decodes a protocol call with its target's ABI, and without knowing the target", () => {
    const data = encodeFunctionData({ abi: verificationRegistryAbi, functionName: "requestEvmBalance", args: [OWNER, TOKEN] });
    for (const decoded of [decodeInput(data, verificationRegistryAbi), decodeInput(data)]) {
      expect(decoded?.name).toBe("requestEvmBalance");
      expect(decoded?.signature).toBe("function requestEvmBalance(address owner, address token) returns (uint256 jobId)");
      expect(decoded?.args).toEqual([
        { name: "owner", type: "address", value: OWNER },
        { name: "token", type: "address", value: TOKEN },
      ]);
    }
  });

  it("decodes a standard token's call and an OP contract's; nothing for a plain transfer or an unknown selector", () => {
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [OWNER, 5n] });
    expect(decodedText(decodeInput(transfer)!)).toBe(`transfer(${OWNER}, 5)`);
    const withdrawal = encodeFunctionData({
      abi: l2ToL1MessagePasserAbi,
      functionName: "initiateWithdrawal",
      args: [OWNER, 100_000n, "0x"],
    });
    expect(decodedText(decodeInput(withdrawal)!)).toBe(`initiateWithdrawal(${OWNER}, 100000, 0x)`);
    expect(decodeInput("0x")).toBeUndefined();
    expect(decodeInput("0xdeadbeef0000")).toBeUndefined();
  });

  it("decodes events, telling ERC-20 and ERC-721 transfers apart by their indexed arguments", () => {
    const vote = encodedLog(
      verificationRegistryAbi,
      "VoteSubmitted",
      { jobId: 7n, licenseId: 2n, operator: OWNER, resultHash: pad("0x01"), sourceBlock: 100n },
      { address: REGISTRY, logIndex: 0 },
    );
    expect(decodedText(decodeLog(vote)!)).toBe(`VoteSubmitted(7, 2, ${OWNER}, ${pad("0x01")}, 100)`);
    const erc20 = encodedLog(erc20Abi, "Transfer", { from: OWNER, to: TOKEN, value: 10n }, { address: TOKEN, logIndex: 1 });
    const erc721 = encodedLog(erc721Abi, "Transfer", { from: zeroAddress, to: OWNER, tokenId: 3n }, { address: TOKEN, logIndex: 2 });
    expect(decodeLog(erc20)?.args.map((arg) => arg.name)).toEqual(["from", "to", "value"]);
    expect(decodeLog(erc20)?.signature).toBe("event Transfer(address indexed from, address indexed to, uint256 value)");
    expect(decodeLog(erc721)?.signature).toBe("event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)");
    expect(decodeLog(erc721)?.args[2]).toEqual({ name: "tokenId", type: "uint256", value: 3n });
    expect(decodeLog({ data: "0x", topics: [pad("0x99")] })).toBeUndefined();
  });

  it("names a revert's custom error with its arguments, and reads Error(string) and Panic(uint256)", () => {
    const custom = encodeErrorResult({ abi: nodeRegistryAbi, errorName: "NodeRegistry_NotLicenseOwner", args: [3n, OWNER] });
    expect(decodedText(decodeRevert(custom)!)).toBe(`NodeRegistry_NotLicenseOwner(3, ${OWNER})`);
    const collateral = encodeErrorResult({
      abi: verificationRegistryAbi,
      errorName: "VerificationRegistry_InsufficientCollateral",
      args: [OWNER, 1n, 10n],
    });
    expect(decodeRevert(collateral)?.args.map((arg) => arg.name)).toEqual(["consumer", "available", "needed"]);
    const standard = parseAbi(["error Error(string)", "error Panic(uint256)"]);
    expect(decodedText(decodeRevert(encodeErrorResult({ abi: standard, errorName: "Error", args: ["no"] }))!)).toBe("Error(no)");
    expect(decodedText(decodeRevert(encodeErrorResult({ abi: standard, errorName: "Panic", args: [0x11n] }))!)).toBe("Panic(17)");
    expect(decodeRevert("0x")).toBeUndefined();
    expect(decodeRevert("0x12345678")).toBeUndefined();
  });
});

describe("the explorer's search box", () => {
  const hash: Hex = `0x${"ab".repeat(32)}`;
  it("reads block numbers, hashes, addresses and jobs", () => {
    expect(parseSearch(" 42 ", known)).toEqual({ kind: "block", number: 42n });
    expect(parseSearch("0x2a", known)).toEqual({ kind: "block", number: 42n });
    expect(parseSearch(hash.toUpperCase().replace("0X", "0x"), known)).toEqual({ kind: "hash", hash });
    expect(parseSearch(OWNER.toLowerCase(), known)).toEqual({ kind: "address", address: OWNER });
    for (const text of ["job:12", "job 12", "JOB#12", "#12"]) expect(parseSearch(text, known)).toEqual({ kind: "job", id: 12n });
  });

  it("finds known contracts by name, on one chain or both, and says what it cannot read", () => {
    const registry = parseSearch("VerificationRegistry", known);
    expect(registry.kind === "contract" && registry.matches.map((match) => [match.chain, match.address])).toEqual([["l2", REGISTRY]]);
    expect(parseSearch("verificationregistry.avn", known)).toEqual(registry);
    const token = parseSearch("PrimaryToken", known);
    expect(token.kind === "contract" && token.matches.map((match) => match.chain)).toEqual(["l1", "l2"]);
    const l1Token = parseSearch("l1:PrimaryToken", known);
    expect(l1Token.kind === "contract" && l1Token.matches.map((match) => match.address)).toEqual([address(0x11)]);
    // The L2 predeploys are known by name without the deployment naming them.
    const passer = parseSearch("L2ToL1MessagePasser", known);
    expect(passer.kind === "contract" && passer.matches[0].address).toBe("0x4200000000000000000000000000000000000016");
    expect(parseSearch("NoSuchContract", known)).toEqual({ kind: "unknown", text: "NoSuchContract" });
    expect(parseSearch("0x1234", known)).toEqual({ kind: "block", number: 0x1234n });
    expect(parseSearch("0xzz", known)).toEqual({ kind: "unknown", text: "0xzz" });
  });
});

describe("a job's story from its registry events", () => {
  let index = 0;
  const at = (eventName: string, args: Record<string, unknown>, block = 10n): JobEvent => ({
    eventName,
    args,
    transactionHash: pad(`0x${(index + 1).toString(16)}`),
    blockNumber: block,
    logIndex: index++,
  });
  const agree = pad("0xaa");
  const other = pad("0xbb");

  it("marks agreeing and disagreeing votes and splits the fee as the registry does, remainder to the first", () => {
    const events = [
      at("VerificationFulfilled", { balance: 5n, queryResultHash: pad("0x05"), sourceBlock: 9n }, 12n),
      at("VerificationRequested", { requester: OWNER, chain: 0, owner: pad(OWNER), asset: pad(TOKEN), fee: 10n }),
      at("VoteSubmitted", { licenseId: 1n, operator: OWNER, resultHash: agree, sourceBlock: 9n }, 11n),
      at("VoteSubmitted", { licenseId: 2n, operator: OWNER, resultHash: other, sourceBlock: 9n }, 11n),
      at("VoteSubmitted", { licenseId: 3n, operator: OWNER, resultHash: agree, sourceBlock: 9n }, 11n),
      at("SubmissionIgnored", { operator: TOKEN, reason: 0 }, 13n),
      at("VoteSubmitted", { licenseId: 4n, operator: OWNER, resultHash: agree, sourceBlock: 9n }, 12n),
    ];
    // Fulfilled is logged after the finalizing vote in its transaction.
    events[0].logIndex = 100;
    const story = jobStory(7n, events);
    expect(story.request?.fee).toBe(10n);
    expect(story.votes.map((vote) => [vote.licenseId, vote.agreed, vote.feeShare])).toEqual([
      [1n, true, 4n],
      [2n, false, undefined],
      [3n, true, 3n],
      [4n, true, 3n],
    ]);
    expect(story.result?.balance).toBe(5n);
    expect(story.ignored).toHaveLength(1);
    expect(story.callbackFailed).toBe(false);
  });

  it("leaves an open job's votes undecided and records an expiry and a failed callback", () => {
    const open = jobStory(8n, [at("VoteSubmitted", { licenseId: 1n, operator: OWNER, resultHash: agree, sourceBlock: 9n })]);
    expect(open.votes[0].agreed).toBeUndefined();
    const expired = jobStory(9n, [at("JobExpired", { requester: OWNER, refundedFee: 10n }), at("CallbackFailed", { consumer: OWNER })]);
    expect(expired.expired?.refundedFee).toBe(10n);
    expect(expired.callbackFailed).toBe(true);
  });
});
