import { decodeFunctionData, encodeFunctionData, keccak256, type Abi, type Hex, type Log } from "viem";
import { describe, expect, it } from "vitest";

import {
  crossDomainMessageHash,
  EXECUTOR_ABI,
  L1_MESSENGER_ABI,
  L2_MESSENGER_ABI,
  l2CallsOfProposal,
} from "@avn/protocol/governance/proposal";
import { proposalOf } from "../src/pages/governance/build-proposal";
import { relayOutcome, sentMessageTo } from "../src/pages/governance/l2-outcome";
import { encodedLog } from "./encoded-log";
import { ADDRESSES, address, EXECUTOR, PROPOSER } from "./governance-fixtures";

const MESSENGER_ABI: Abi = L1_MESSENGER_ABI;
const { l1Messenger, timelock } = ADDRESSES;
const DEADLINE = 1_800_000_000n;

/** The proposal's one action, as the timelock runs it: `sendMessage(executor, execute(calls, deadline), gas)`. */
const proposal = proposalOf({
  changes: [{ kind: "set-quorum", quorum: 4n }],
  note: undefined,
  proposer: PROPOSER,
  addresses: ADDRESSES,
  timing: { votingDelay: 1n, votingPeriod: 5n, timelockDelay: 60n, now: 1_700_000_000n },
  l1BlockSeconds: 12,
});
const [target, message, gasLimit] = decodeFunctionData({ abi: L1_MESSENGER_ABI, data: proposal.calldatas[0] }).args as [Hex, Hex, number];

/** The logs the L1 messenger leaves when the timelock sends `message` to `to`: `SentMessage`, then the value. */
const sent = (to: Hex, nonce: bigint, value: bigint, firstIndex: number, emitter: Hex = l1Messenger): Log[] => [
  encodedLog(
    MESSENGER_ABI,
    "SentMessage",
    { target: to, sender: timelock, message, messageNonce: nonce, gasLimit: BigInt(gasLimit) },
    { address: emitter, logIndex: firstIndex },
  ),
  encodedLog(MESSENGER_ABI, "SentMessageExtension1", { sender: timelock, value }, { address: emitter, logIndex: firstIndex + 1 }),
];

describe("sentMessageTo: the executor's message in the timelock's execution", () => {
  it("reads the message the proposal carries, with the value of its own extension event", () => {
    expect(target).toBe(EXECUTOR);
    const nonce = (1n << 240n) + 7n; // version 1 in the top bytes, as the messenger numbers its messages
    const found = sentMessageTo({ logs: sent(EXECUTOR, nonce, 0n, 3) }, l1Messenger, EXECUTOR);
    expect(found).toEqual({ target: EXECUTOR, sender: timelock, message, nonce, gasLimit: BigInt(gasLimit), value: 0n });
    // The message is the batch the proposal was made of.
    const batch = decodeFunctionData({ abi: EXECUTOR_ABI, data: found!.message });
    expect(batch.functionName).toBe("execute");
    expect(batch.args).toEqual([l2CallsOfProposal(proposal.calldatas)?.calls, l2CallsOfProposal(proposal.calldatas)?.deadline]);
    // The hash the L2 messenger records it under: that of the relayMessage call carrying it.
    expect(crossDomainMessageHash(found!)).toBe(
      keccak256(
        encodeFunctionData({
          abi: L2_MESSENGER_ABI,
          functionName: "relayMessage",
          args: [nonce, timelock, EXECUTOR, 0n, BigInt(gasLimit), message],
        }),
      ),
    );
  });

  it("ignores messages to other targets, their extensions, and look-alike events from another contract", () => {
    const logs = [
      ...sent(address(0x77), 1n, 5n, 0, address(0xbb)), // another contract's events, same signature
      ...sent(EXECUTOR, 2n, 9n, 2),
      ...sent(address(0x77), 3n, 5n, 4), // a later message to someone else, with its own value
    ];
    expect(sentMessageTo({ logs }, l1Messenger, EXECUTOR)).toMatchObject({ nonce: 2n, value: 9n });
    // Addresses compare whatever their case.
    expect(sentMessageTo({ logs }, l1Messenger.toLowerCase() as Hex, EXECUTOR.toLowerCase() as Hex)).toMatchObject({ nonce: 2n });
    expect(sentMessageTo({ logs: sent(address(0x77), 1n, 0n, 0) }, l1Messenger, EXECUTOR)).toBeUndefined();
    expect(sentMessageTo({ logs: [] }, l1Messenger, EXECUTOR)).toBeUndefined();
  });
});

describe("relayOutcome: the L2 messenger's record and the L2 clock", () => {
  const hash = keccak256("0x01");
  const record = (succeeded: boolean, failed: boolean, l2Time: bigint) => relayOutcome(hash, { succeeded, failed, l2Time }, DEADLINE);

  it("awaits the relay until the deadline, the deadline's own second included", () => {
    expect(record(false, false, DEADLINE)).toEqual({ kind: "awaiting relay", messageHash: hash });
    expect(record(false, false, DEADLINE + 1n)).toEqual({ kind: "expired", messageHash: hash });
  });

  it("keeps a failed batch replayable until the deadline, then calls it expired", () => {
    expect(record(false, true, DEADLINE)).toEqual({ kind: "failed", messageHash: hash });
    expect(record(false, true, DEADLINE + 1n)).toEqual({ kind: "expired", messageHash: hash });
  });

  it("counts a success, a replay's included, whatever the time", () => {
    expect(record(true, false, DEADLINE + 1_000n)).toEqual({ kind: "executed", messageHash: hash });
    expect(record(true, true, DEADLINE)).toEqual({ kind: "executed", messageHash: hash });
  });

  it("never expires a message without a deadline", () => {
    expect(relayOutcome(hash, { succeeded: false, failed: true, l2Time: 2n ** 63n }, undefined)).toEqual({
      kind: "failed",
      messageHash: hash,
    });
  });
});
