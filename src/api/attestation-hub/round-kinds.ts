import { balanceKind, conditionKind, type AttestationKind } from "@avn/protocol/attestation-kinds";
import { encodeSubject } from "../../common/attestation-subject.ts";
import type { AttestQuery, ConditionQuery, HubMessage, SignedAnswer } from "../../common/hub-protocol.ts";
import type { BalanceAttestation } from "@avn/protocol/attestation";
import { conditionHash, conditionLeaves, ownersHash, type ConditionAttestation } from "@avn/protocol/conditions";
import { conditionReading } from "../../chains/condition-reader.ts";
import { queryResultHash } from "../../common/query-result.ts";

/** A round's request as a node receives it: a balance's (`attest`) or a condition's (`attestCondition`). */
export type RoundRequest = Extract<HubMessage, { type: "attest" | "attestCondition" }>;
export type { SignedAnswer } from "../../common/hub-protocol.ts";

/**
 * What one round asks: its request and which structs answer it. How its signed answers are read (the
 * frame, the struct, the signature) is its kind's (`@avn/protocol/attestation-kinds`); everything else (who
 * is asked, the quorum of live licenses, the statistics, the deadline, the relay across instances) is the
 * rounds'.
 */
export interface RoundKind<S, E = unknown> {
  /** The label of the round metrics (`chain`): evm, svm or condition. */
  readonly label: "evm" | "svm" | "condition";
  /** The kind of signed answer the round gathers. */
  readonly kind: AttestationKind<S, unknown>;
  /** The request sent to every node asked, under round id `id`. */
  request(id: string): RoundRequest;
  /** Whether `struct` answers the very question asked: every field the hub pinned or named is as asked. */
  asks(struct: S): boolean;
  /**
   * What the node read, from its answer (`evidence`), once checked against the struct it signed: absent when
   * the node sent none (its frame would have been too large), `contradicts` when it does not match the struct
   * (such an answer is invalid: a node that sends what it did not sign is not trusted for either).
   */
  evidence(struct: S, answer: SignedAnswer): { evidence?: E } | "contradicts";
}

/** A condition's leaf as a node read it: the raw balance and its QueryResult, as the balance routes write it. */
export interface LeafEvidence {
  balance: bigint;
  queryResult: string;
}

/**
 * A balance round: chain, owner, asset, position and issue time are asked; balance and QueryResult hash are
 * what each node read, so two honest structs can differ there (the source moved) and are grouped apart.
 */
export function balanceRound(query: AttestQuery): RoundKind<BalanceAttestation, string> {
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
    // The QueryResult bytes the node read: they must hash to the struct's `queryResultHash`.
    evidence: (attestation, answer) => {
      if (answer.type !== "attestation" || answer.evidence === undefined) return {};
      const { queryResult } = answer.evidence;
      // The chain's own spelling: an EVM word with `0x`, Solana accounts' data without.
      if (queryResult.startsWith("0x") !== (query.chain === 0)) return "contradicts";
      return queryResultHash(queryResult).toLowerCase() === attestation.queryResultHash
        ? { evidence: queryResult.toLowerCase() }
        : "contradicts";
    },
  };
}

/**
 * A condition round: every field of the struct is asked but the verdict, which is what each node read and
 * evaluated; two honest structs can differ there (a Solana leaf read at a later slot) and are grouped apart.
 */
export function conditionRound(query: ConditionQuery): RoundKind<ConditionAttestation, LeafEvidence[]> {
  const expected = {
    conditionHash: conditionHash(query.request.condition).toLowerCase(),
    ownersHash: ownersHash(query.request.owners).toLowerCase(),
    ethereumBlock: query.ethereumBlock,
    solanaSlot: query.solanaSlot,
    issuedAt: query.issuedAt,
  };
  const leaves = conditionLeaves(query.request.condition);
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
    }),
    kind: conditionKind,
    asks: (attestation) =>
      attestation.conditionHash === expected.conditionHash &&
      attestation.ownersHash === expected.ownersHash &&
      attestation.ethereumBlock === expected.ethereumBlock &&
      attestation.solanaSlot === expected.solanaSlot &&
      attestation.issuedAt === expected.issuedAt,
    // One reading per leaf, in order, that evaluates to the signed verdict; an Ethereum leaf's QueryResult is
    // its balance's word. (A Solana leaf's bytes are its accounts' data, not checked against the balance here.)
    evidence: (attestation, answer) => {
      if (answer.type !== "conditionAttestation" || answer.evidence === undefined) return {};
      const read = answer.evidence.leaves.map(({ balance, queryResult }) => ({
        balance: BigInt(balance),
        queryResult: queryResult.toLowerCase(),
      }));
      if (read.length !== leaves.length) return "contradicts";
      const consistent = leaves.every((leaf, index) => {
        const { balance, queryResult } = read[index];
        return leaf.chain === "ethereum"
          ? /^0x[0-9a-f]{64}$/.test(queryResult) && BigInt(queryResult) === balance
          : !queryResult.startsWith("0x");
      });
      return consistent && conditionReading(query.request.condition, read).verdict === attestation.verdict
        ? { evidence: read }
        : "contradicts";
    },
  };
}
