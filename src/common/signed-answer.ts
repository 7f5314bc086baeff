import type { AttestationDomain } from "@avn/protocol/attestation";
import { KIND_OF_FRAME } from "@avn/protocol/attestation-kinds";

import { recoverAttestationSigner } from "./attestation.ts";
import type { SignedAnswer } from "./hub-protocol.ts";

/** What a node keeps of an answer it signed, to check others' signatures of the very same struct. */
export interface OwnSignedAnswer {
  /** The struct's issue time (chain time the node accepted before signing): the epoch the round counts in. */
  issuedAt: bigint;
  licenseIds: readonly string[];
  signature: string;
  /** The address that signed this struct for `licenseIds`, or undefined (a malformed or high-s signature). */
  recover(licenseIds: readonly bigint[], signature: string): string | undefined;
}

/** A signed answer as the node sends it (either kind). */
export type SignedReply = Pick<SignedAnswer, "type" | "message" | "licenseIds" | "signature">;

/** `answer` (of any kind: its frame type names it) as `OwnSignedAnswer`, recovering under `domain`. */
export function ownSignedAnswer(domain: AttestationDomain, answer: SignedReply): OwnSignedAnswer {
  const kind = KIND_OF_FRAME[answer.type];
  const struct = kind.fromMessage(answer.message as never);
  return {
    licenseIds: answer.licenseIds,
    signature: answer.signature,
    issuedAt: kind.issuedAt(struct as never),
    recover: (ids, signature) => recoverAttestationSigner(kind, domain, struct, ids, signature),
  };
}
