import type { ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import type { ConditionRequest } from "@avn/protocol/conditions";

import {
  chainsOf,
  conditionReading,
  readCondition,
  type ConditionPositions,
  type ConditionReading,
} from "../../chains/condition-reader.ts";

import { attestationToJson } from "../../common/attestation.ts";

import { conditionKind } from "@avn/protocol/attestation-kinds";

import { pinnedEvmBlock, quorumOrNotFound, type AttestationService } from "./attested-query.ts";

import { QuorumNotReachedError } from "./rounds.ts";

export interface AttestedCondition {
  /** The signed verdict, and the leaves as one of its signers read them (empty unless the request reveals them). */
  reading: ConditionReading;
  /** `{ ethereumBlock, solanaSlot }`: 0 for a chain without leaves. */
  positions: ConditionPositions;
  attestation: ConditionAttestationJson;
}

/**
 * A verdict over a holding condition, signed by a quorum. The positions are pinned as for balances (the
 * Ethereum block `evmConfirmations` below the head, the latest Solana slot), only for the chains the
 * condition has leaves on; the issue time is the L2 head's. Each node reads every leaf and signs the verdict
 * it finds; the answer travels once: the verdict is the quorum's, and the leaves a revealing answer lists
 * are those a signer read, sent with its signature (the hub checked that they evaluate to that verdict).
 * The API reads the leaves itself only when it must: a revealing answer whose signers' readings did not
 * fit a frame (its verdict must then be the quorum's), and a round without quorum, where its read tells a
 * missing asset (`AssetNotFoundError`, the route's 404) from the 503; a network short of the quorum is
 * refused at its admission, with nothing read. The caller has verified the link signature already (the nodes
 * verify it again).
 */
export async function attestCondition(service: AttestationService, request: ConditionRequest): Promise<AttestedCondition> {
  const chains = chainsOf(request.condition);
  // Admitted beside the reads that pin the question: a network short of the quorum is refused at once.
  const [admission, ethereumBlock, solanaSlot, issuedAt] = await Promise.all([
    service.hub.admit("condition"),
    chains.ethereum ? pinnedEvmBlock(service) : 0n,
    chains.solana ? service.solana.latestSlot() : 0n,
    service.hub.issuedAt(),
  ]);
  const positions: ConditionPositions = { ethereumBlock, solanaSlot };
  const read = () => readCondition(request, service.pinned, positions);
  const gathering = service.hub.gatherCondition(
    {
      request: { owners: request.owners, condition: request.condition, ...(request.links === undefined ? {} : { links: request.links }) },
      ethereumBlock,
      solanaSlot,
      issuedAt,
    },
    admission,
  );
  const { attestation, signatures, evidence } = await quorumOrNotFound(gathering, read);
  let reading: ConditionReading = { verdict: attestation.verdict, leaves: [] };
  // The hub kept a signer's readings only if they evaluate to the signed verdict.
  if (request.reveal && evidence !== undefined) reading = conditionReading(request.condition, evidence);
  else if (request.reveal) {
    reading = await read();
    if (reading.verdict !== attestation.verdict)
      throw new QuorumNotReachedError("The nodes' signed verdict differs from the API's own read (the source moved); retry");
  }
  return { reading, positions, attestation: attestationToJson(conditionKind, service.hub.domain, attestation, signatures) };
}
