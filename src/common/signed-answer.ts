import type { AttestationDomain, AttestationJson } from "@avn/protocol/attestation";
import type { ConditionAttestationJson } from "@avn/protocol/conditions";

import { attestationMessageFromJson, recoverAttestationSigner } from "./attestation.ts";
import { conditionMessageFromJson, recoverConditionSigner } from "./condition-attestation.ts";

/** What a node keeps of an answer it signed, to check others' signatures of the very same struct. */
export interface OwnSignedAnswer {
  /** The struct's issue time (chain time the node accepted before signing): the epoch the round counts in. */
  issuedAt: bigint;
  licenseIds: readonly string[];
  signature: string;
  /** The address that signed this struct for `licenseIds`, or undefined (a malformed or high-s signature). */
  recover(licenseIds: readonly bigint[], signature: string): string | undefined;
}

/** A signed answer as the node sends it (`SignedAnswer` on the wire). */
export type SignedReply = { licenseIds: readonly string[]; signature: string } & (
  | { type: "attestation"; message: AttestationJson["message"] }
  | { type: "conditionAttestation"; message: ConditionAttestationJson["message"] }
);

/** `answer` (a balance's or a condition's) as `OwnSignedAnswer`, recovering under `domain`. */
export function ownSignedAnswer(domain: AttestationDomain, answer: SignedReply): OwnSignedAnswer {
  const own = { licenseIds: answer.licenseIds, signature: answer.signature };
  if (answer.type === "attestation") {
    const struct = attestationMessageFromJson(answer.message);
    return { ...own, issuedAt: struct.issuedAt, recover: (ids, signature) => recoverAttestationSigner(domain, struct, ids, signature) };
  }
  const struct = conditionMessageFromJson(answer.message);
  return { ...own, issuedAt: struct.issuedAt, recover: (ids, signature) => recoverConditionSigner(domain, struct, ids, signature) };
}
