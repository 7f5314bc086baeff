import { address } from "@solana/kit";

import { balanceKind } from "@avn/protocol/attestation-kinds";
import { AttestedChain, type BalanceAttestation } from "@avn/protocol/attestation";
import { queryResultHash } from "../common/query-result.ts";
import { encodeSubject } from "../common/attestation-subject.ts";
import type { RoundRequestOf, SignedAnswerOf } from "../common/hub-protocol.ts";
import type { PinnedReaders } from "../chains/pinned-readers.ts";
import {
  blockLagRefusal,
  issueTimeRefusal,
  readFailure,
  RoundSigner,
  signedAnswer,
  uint64Of,
  type Refusal,
  type SigningOptions,
} from "./signing-rules.ts";

/**
 * Answers the hub's attestation requests. The hub names the question (chain, owner, asset) and pins the
 * position and issue time; the node reads the balance ITSELF from its own source RPCs at that position,
 * through the same readers as its votes, builds the struct from what it read, and signs it; the read's
 * QueryResult bytes go with the signature, so the API need not read the source again. It never
 * signs a value it was handed, and refuses a position further back than `maxBlockLag` blocks or an issue
 * time further than `maxClockSkewSeconds` from its own view of the L2 head's time (either would let a hub
 * pass an old balance off as fresh; the hub pins the issue time to the L2 head's timestamp, chain time).
 */
export class AttestationSigner extends RoundSigner<
  RoundRequestOf<"attest">,
  SignedAnswerOf<"attestation">,
  SigningOptions & { pinned: PinnedReaders }
> {
  protected async sign(request: RoundRequestOf<"attest">, refuse: (reason: string) => Refusal) {
    const chain = request.chain;
    if (chain !== AttestedChain.ethereum && chain !== AttestedChain.solana) return refuse("unknown chain");
    if (!validAddress(chain, request.owner) || !validAddress(chain, request.asset)) return refuse("malformed address");
    const sourceBlock = uint64Of(request.sourceBlock);
    const issuedAt = uint64Of(request.issuedAt);
    if (sourceBlock === undefined || issuedAt === undefined) return refuse("malformed position or issue time");
    const late = await issueTimeRefusal(issuedAt, this.options);
    if (late !== undefined) return refuse(late);
    let read: { balance: bigint; queryResult: string };
    try {
      if (chain === AttestedChain.ethereum) {
        const lag = await blockLagRefusal(sourceBlock, this.options);
        if (lag !== undefined) return refuse(lag);
        read = await this.options.pinned.evmAt(sourceBlock).balanceOf(request.asset, request.owner);
      } else {
        // The pinned slot as the lower bound: the mint and the accounts are then read at once.
        const solana = await this.options.pinned
          .solanaFrom(sourceBlock)
          .balanceOf(request.owner, request.asset, { minContextSlot: sourceBlock });
        if (solana.slot < sourceBlock) return refuse(`the Solana RPC answered from slot ${solana.slot}, below ${sourceBlock}`);
        read = solana;
      }
    } catch (error) {
      return refuse(readFailure(error));
    }
    const attestation: BalanceAttestation = {
      chain,
      ...encodeSubject({ chain, owner: request.owner, asset: request.asset }),
      balance: read.balance,
      queryResultHash: queryResultHash(read.queryResult).toLowerCase(),
      sourceBlock,
      issuedAt,
    };
    // The bytes travel with the signature: the API serves them, checked against the signed hash.
    return signedAnswer(balanceKind, this.options, request.id, attestation, { queryResult: read.queryResult });
  }
}

function validAddress(chain: number, value: string): boolean {
  if (chain === AttestedChain.ethereum) return /^0x[0-9a-fA-F]{40}$/.test(value);
  try {
    address(value);
    return true;
  } catch {
    return false;
  }
}
