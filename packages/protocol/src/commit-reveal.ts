/**
 * Commit–reveal voting on `VerificationRegistry` (docs/verification.md, "No credit for copying"): a node
 * first commits to its answers (`commitResults(commitment)`), then reveals them in a later block
 * (`revealResults(salt, submissions)`). The commitment binds the operator, a secret salt and the reveal's
 * calldata, so the answers stay hidden until the reveal and nobody else can reveal or claim them.
 */
import { encodeAbiParameters, keccak256, size, slice, type Address, type Hex } from "viem";

/** Bytes of a `revealResults` call before its submissions: the selector (4) and the salt (32). */
export const REVEAL_HEAD_BYTES = 36;

/**
 * The commitment that `revealCalldata` (a whole `revealResults(salt, submissions)` call, as sent) reveals for
 * `operator`: keccak256(abi.encode(operator, salt, keccak256(calldata after the selector and the salt))),
 * what `VerificationRegistry.revealCommitment` computes.
 */
export function revealCommitmentOf(operator: Address, revealCalldata: Hex): Hex {
  if (size(revealCalldata) <= REVEAL_HEAD_BYTES) throw new RangeError("not a revealResults call: no submissions after the salt");
  const salt = slice(revealCalldata, 4, REVEAL_HEAD_BYTES);
  const tail = slice(revealCalldata, REVEAL_HEAD_BYTES);
  return keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }, { type: "bytes32" }], [operator, salt, keccak256(tail)]));
}
