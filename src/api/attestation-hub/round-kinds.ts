import { balanceKind, conditionKind, type AttestationKind } from "@avn/protocol/attestation-kinds";
import { encodeSubject } from "../../common/attestation-subject.ts";
import type { AttestQuery, ConditionQuery, HubMessage } from "../../common/hub-protocol.ts";
import type { BalanceAttestation } from "@avn/protocol/attestation";
import { conditionHash, ownersHash, type ConditionAttestation } from "@avn/protocol/conditions";

/** A round's request as a node receives it: a balance's (`attest`) or a condition's (`attestCondition`). */
export type RoundRequest = Extract<HubMessage, { type: "attest" | "attestCondition" }>;
export type { SignedAnswer } from "../../common/hub-protocol.ts";

/**
 * What one round asks: its request and which structs answer it. How its signed answers are read (the
 * frame, the struct, the signature) is its kind's (`@avn/protocol/attestation-kinds`); everything else (who
 * is asked, the quorum of live licenses, the statistics, the deadline, the relay across instances) is the
 * rounds'.
 */
export interface RoundKind<S> {
  /** The label of the round metrics (`chain`): evm, svm or condition. */
  readonly label: "evm" | "svm" | "condition";
  /** The kind of signed answer the round gathers. */
  readonly kind: AttestationKind<S, unknown>;
  /** The request sent to every node asked, under round id `id`. */
  request(id: string): RoundRequest;
  /** Whether `struct` answers the very question asked: every field the hub pinned or named is as asked. */
  asks(struct: S): boolean;
}

/**
 * A balance round: chain, owner, asset, position and issue time are asked; balance and QueryResult hash are
 * what each node read, so two honest structs can differ there (the source moved) and are grouped apart.
 */
export function balanceRound(query: AttestQuery): RoundKind<BalanceAttestation> {
  const { owner, asset } = encodeSubject(query);
  return {
    label: query.chain === 0 ? "evm" : "svm",
    request: (id) => ({
      type: "attest",
      id,
      chain: query.chain,
      owner: query.owner,
      asset: query.asset,
      sourceBlock: query.sourceBlock.toString(),
      issuedAt: query.issuedAt.toString(),
    }),
    kind: balanceKind,
    asks: (attestation) =>
      attestation.chain === query.chain &&
      attestation.owner === owner &&
      attestation.asset === asset &&
      attestation.sourceBlock === query.sourceBlock &&
      attestation.issuedAt === query.issuedAt,
  };
}

/**
 * A condition round: every field of the struct is asked, the verdict too (the API's own evaluation; a
 * node whose reads give another refuses), so there is one struct to sign and a signature of any other is
 * not an answer to this round.
 */
export function conditionRound(query: ConditionQuery): RoundKind<ConditionAttestation> {
  const expected: ConditionAttestation = {
    conditionHash: conditionHash(query.request.condition).toLowerCase(),
    ownersHash: ownersHash(query.request.owners).toLowerCase(),
    verdict: query.verdict,
    ethereumBlock: query.ethereumBlock,
    solanaSlot: query.solanaSlot,
    issuedAt: query.issuedAt,
  };
  // Exactly the three fields a node expects: a `reveal` left in would make every node refuse the round.
  const { owners, condition, links } = query.request;
  const request = links === undefined ? { owners, condition } : { owners, condition, links };
  return {
    label: "condition",
    request: (id) => ({
      type: "attestCondition",
      id,
      request,
      ethereumBlock: query.ethereumBlock.toString(),
      solanaSlot: query.solanaSlot.toString(),
      issuedAt: query.issuedAt.toString(),
      verdict: query.verdict,
    }),
    kind: conditionKind,
    asks: (attestation) =>
      attestation.conditionHash === expected.conditionHash &&
      attestation.ownersHash === expected.ownersHash &&
      attestation.verdict === expected.verdict &&
      attestation.ethereumBlock === expected.ethereumBlock &&
      attestation.solanaSlot === expected.solanaSlot &&
      attestation.issuedAt === expected.issuedAt,
  };
}
