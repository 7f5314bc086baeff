import { isDeepStrictEqual } from "node:util";

import {
  ConditionInputError,
  conditionHash,
  ownersHash,
  parseConditionRequest,
  verifySolanaLink,
  type ConditionAttestation,
  type ConditionRequest,
} from "@avn/protocol/conditions";
import {
  chainsOf,
  readCondition,
  type ConditionPositions,
  type ConditionReading,
  type ConditionSources,
} from "../chains/condition-reader.ts";
import { conditionKind } from "@avn/protocol/attestation-kinds";
import {
  attestConditionRequestSchema,
  type ConditionFrameRequest,
  type RoundRequestOf,
  type SignedAnswerOf,
} from "../common/hub-protocol.ts";
import {
  blockLagRefusal,
  issueTimeRefusal,
  readFailure,
  RoundSigner,
  signedAnswer,
  type Refusal,
  type SigningOptions,
} from "./signing-rules.ts";
import { AvnError } from "@avn/protocol/errors";

/** A condition signer's answer to a round. */
export type ConditionReply = SignedAnswerOf<"conditionAttestation"> | Refusal;

/**
 * Answers the hub's condition requests (signed verdicts over holding conditions). The hub names the
 * question (the owners and the condition, in its normal form) and pins the positions and the issue time.
 * The node parses the request again as the API does and refuses one
 * that is not in its normal form; with both owners it requires the Solana owner's link signature for its
 * own L2 chain ("sign nothing without it": the link is what ties the Solana owner to the Ethereum one);
 * it checks the positions (a chain without leaves pinned at 0, one with leaves not) and the issue time by
 * the rules of every signature (`signing-rules.ts`); then it reads every leaf ITSELF from its own source
 * RPCs, evaluates the verdict and signs it, with its readings beside the signature (the API serves those
 * when asked to reveal the leaves). Nobody tells a node the verdict: it never signs a value it was handed,
 * and the hub groups the structs it gets, as it does balances.
 */
export class ConditionSigner extends RoundSigner<
  RoundRequestOf<"attestCondition">,
  SignedAnswerOf<"conditionAttestation">,
  // The node's own source readers at pinned positions (`PinnedReaders`).
  SigningOptions & { pinned: ConditionSources }
> {
  protected async sign(frame: RoundRequestOf<"attestCondition">, refuse: (reason: string) => Refusal) {
    const checked = attestConditionRequestSchema.safeParse(frame);
    if (!checked.success) return refuse("malformed condition request");
    const sent = checked.data;

    // Parsed again from the frame as it came (not from the schema's copy), exactly as the API parses a body.
    let request: ConditionRequest;
    try {
      request = parseConditionRequest(frame.request);
    } catch (error) {
      return refuse(error instanceof ConditionInputError ? `malformed condition request: ${error.message}` : "malformed condition request");
    }
    // The hash the node signs is the normal form's; a request sent in another form is not what the API parsed.
    if (!isDeepStrictEqual(frame.request, frameOf(request))) return refuse("the condition request is not in its normal form");

    const { ethereum, solana } = request.owners;
    if (ethereum !== undefined && solana !== undefined) {
      if (request.links === undefined) return refuse("no Solana link signature: a request naming both owners needs one");
      if (!(await verifySolanaLink({ ethereum, solana }, request.links.solana, this.options.domain.chainId)))
        return refuse(`the Solana link signature does not verify for L2 chain ${this.options.domain.chainId}`);
    }

    const positions: ConditionPositions = { ethereumBlock: BigInt(sent.ethereumBlock), solanaSlot: BigInt(sent.solanaSlot) };
    const chains = chainsOf(request.condition);
    const misplaced =
      positionRefusal("ethereum", chains.ethereum, positions.ethereumBlock) ??
      positionRefusal("solana", chains.solana, positions.solanaSlot);
    if (misplaced !== undefined) return refuse(misplaced);
    const issuedAt = BigInt(sent.issuedAt);
    const late = await issueTimeRefusal(issuedAt, this.options);
    if (late !== undefined) return refuse(late);

    let reading: ConditionReading;
    try {
      if (chains.ethereum) {
        const lag = await blockLagRefusal(positions.ethereumBlock, this.options);
        if (lag !== undefined) return refuse(lag);
      }
      reading = await readCondition(request, notBelowSlot(this.options.pinned), positions);
    } catch (error) {
      return refuse(error instanceof SlotBelowPinError ? error.message : readFailure(error));
    }

    const attestation: ConditionAttestation = {
      conditionHash: conditionHash(request.condition),
      ownersHash: ownersHash(request.owners),
      verdict: reading.verdict,
      ethereumBlock: positions.ethereumBlock,
      solanaSlot: positions.solanaSlot,
      issuedAt,
    };
    const leaves = reading.leaves.map(({ balance, queryResult }) => ({ balance: balance.toString(), queryResult }));
    return signedAnswer(conditionKind, this.options, frame.id, attestation, { leaves });
  }
}

/** The request as a round carries it (no `reveal`, `links` only when present): what the node compares the sent one with. */
function frameOf(request: ConditionRequest): ConditionFrameRequest {
  return {
    owners: request.owners,
    condition: request.condition,
    ...(request.links === undefined ? {} : { links: request.links }),
  };
}

/**
 * Why a chain's position is refused: a chain with leaves must be pinned (a position 0 would read the genesis
 * block), and a chain without must be 0 (the struct would name a position the verdict says nothing about).
 */
function positionRefusal(chain: "ethereum" | "solana", hasLeaves: boolean, position: bigint): string | undefined {
  if (hasLeaves && position === 0n) return `the condition has ${chain} leaves, but no ${chain} position is pinned`;
  if (!hasLeaves && position !== 0n) return `the condition has no ${chain} leaf, but a ${chain} position ${position} is pinned`;
  return undefined;
}

class SlotBelowPinError extends AvnError<"SLOT_BELOW_PIN"> {
  constructor(message: string) {
    super("SLOT_BELOW_PIN", message);
    this.name = "SlotBelowPinError";
  }
}

/**
 * The sources with one more check on Solana: the RPC's answer must come from the pinned slot or later.
 * `minContextSlot` asks for that already; an RPC that ignores it would have the node sign an older state.
 */
function notBelowSlot(sources: ConditionSources): ConditionSources {
  return {
    evmAt: (block) => sources.evmAt(block),
    solanaFrom: (slot) => ({
      balancesOf: async (owner, mints, options) => {
        const reads = await sources.solanaFrom(slot).balancesOf(owner, mints, options);
        for (const read of reads.values())
          if (read.slot < slot) throw new SlotBelowPinError(`the Solana RPC answered from slot ${read.slot}, below ${slot}`);
        return reads;
      },
    }),
  };
}
