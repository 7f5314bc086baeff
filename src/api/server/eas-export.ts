import { attestationFromJson } from "../../common/attestation.ts";
import { balanceKind, conditionKind, type AttestationJson, type ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import { balanceEasExport, conditionEasExport, type EasExportJson } from "@avn/protocol/eas";

import { ApiError } from "../api-error.ts";
import type { AttestationService } from "../attestation-hub/attested-query.ts";
import type { ExporterSettings } from "../attestation-hub/exporter-check.ts";

// `?eas=true` (docs/eas.md): with `?attest=true`, the answer also carries `data.eas`, the call that exports the
// signed answer to the Ethereum Attestation Service through the network's `AttestationExporter`.

export const EAS_NEEDS_ATTEST = "eas=true needs attest=true: only a quorum-signed answer can be exported to EAS";
export const EAS_NOT_ENABLED = "Exports to EAS are not enabled on this server (ATTESTATION_EXPORTER is not set)";

/** The `eas` query parameter, for a route's querystring schema. */
export const easQueryProperty = {
  eas: {
    type: "string",
    enum: ["true", "false"],
    description:
      "true (with attest=true): add data.eas, the call that exports data.attestation to the Ethereum Attestation Service through the " +
      "network's AttestationExporter (its address, the schema UID, the calldata). 400 without attest=true, 501 when the server has no exporter",
  },
} as const;

/**
 * The exporter an answer's `data.eas` is made for: undefined when `eas` is not asked. A 400 for `eas=true`
 * without `attest=true`; a 501 when the server has no exporter (its hub off, or `ATTESTATION_EXPORTER` unset).
 * Checked before any read, with the route's other refusals.
 */
export function easExporterFor(
  query: { attest?: string; eas?: string },
  attestation: AttestationService | undefined,
): ExporterSettings | undefined {
  if (query.eas !== "true") return undefined;
  if (query.attest !== "true") throw new ApiError(400, EAS_NEEDS_ATTEST);
  if (attestation?.exporter === undefined) throw new ApiError(501, EAS_NOT_ENABLED);
  return attestation.exporter;
}

/** `data.eas` of a signed balance. */
export function balanceEas(exporter: ExporterSettings, json: AttestationJson): EasExportJson {
  const { attestation, signatures } = attestationFromJson(balanceKind, json);
  return balanceEasExport(exporter, attestation, signatures);
}

/** `data.eas` of a signed verdict. */
export function conditionEas(exporter: ExporterSettings, json: ConditionAttestationJson): EasExportJson {
  const { attestation, signatures } = attestationFromJson(conditionKind, json);
  return conditionEasExport(exporter, attestation, signatures);
}
