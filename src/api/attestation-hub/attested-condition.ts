import type { ConditionAttestationJson, ConditionRequest } from "@avn/protocol/conditions";
import { chainsOf, readCondition, type ConditionPositions, type ConditionReading } from "../../chains/condition-reader.ts";
import { attestationToJson } from "../../common/attestation.ts";
import { conditionKind } from "@avn/protocol/attestation-kinds";
import { pinnedEvmBlock, type AttestationService } from "./attested-query.ts";

export interface AttestedCondition {
  /** The API's own reads and verdict (from `readCondition`): the leaves a revealing answer lists. */
  reading: ConditionReading;
  /** `{ ethereumBlock, solanaSlot }`: 0 for a chain without leaves. */
  positions: ConditionPositions;
  attestation: ConditionAttestationJson;
}

/**
 * A verdict over a holding condition, signed by a quorum. The positions are pinned as for balances (the
 * Ethereum block `evmConfirmations` below the head, the latest Solana slot), only for the chains the
 * condition has leaves on; the issue time is the L2 head's. The API reads every leaf and evaluates the
 * verdict itself first (an asset that is not there rejects with `AssetNotFoundError`: the route's 404),
 * then asks the nodes with that verdict: each reads the leaves itself and signs only when it finds the
 * same, so the answer returned is one a quorum read and agrees with the API's own reading, never one it
 * was handed. The caller has verified the link signature already (the nodes verify it again).
 * `QuorumNotReachedError` when too few licenses are connected or agree within the deadline.
 */
export async function attestCondition(service: AttestationService, request: ConditionRequest): Promise<AttestedCondition> {
  const chains = chainsOf(request.condition);
  const [ethereumBlock, solanaSlot, issuedAt] = await Promise.all([
    chains.ethereum ? pinnedEvmBlock(service) : 0n,
    chains.solana ? service.solana.latestSlot() : 0n,
    service.hub.issuedAt(),
  ]);
  const positions: ConditionPositions = { ethereumBlock, solanaSlot };
  const reading = await readCondition(request, service.pinned, positions);
  const { attestation, signatures } = await service.hub.gatherCondition({
    request: { owners: request.owners, condition: request.condition, ...(request.links === undefined ? {} : { links: request.links }) },
    ethereumBlock,
    solanaSlot,
    issuedAt,
    verdict: reading.verdict,
  });
  return { reading, positions, attestation: attestationToJson(conditionKind, service.hub.domain, attestation, signatures) };
}
