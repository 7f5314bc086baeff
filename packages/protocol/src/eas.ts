import { z } from "zod/mini";
import { encodeFunctionData, encodePacked, getAddress, keccak256, parseAbi, type Hex } from "viem";

import type { BalanceAttestation, NodeSignature } from "./attestation.ts";
import type { ConditionAttestation } from "./conditions.ts";

/**
 * What an integrator needs to export a signed answer to the Ethereum Attestation Service through the
 * network's `AttestationExporter` (docs/eas.md): its two schemas, their UIDs, and the export's call.
 */

/** The EAS schema of balance answers: `BalanceAttestation`'s fields in their order (`AttestationExporter.BALANCE_SCHEMA`). */
export const BALANCE_EAS_SCHEMA =
  "uint8 chain,bytes32 owner,bytes32 asset,uint256 balance,bytes32 queryResultHash,uint64 sourceBlock,uint64 issuedAt";

/** The EAS schema of verdicts: `ConditionAttestation`'s fields in their order (`AttestationExporter.CONDITION_SCHEMA`). */
export const CONDITION_EAS_SCHEMA =
  "bytes32 conditionHash,bytes32 ownersHash,bool verdict,uint64 ethereumBlock,uint64 solanaSlot,uint64 issuedAt";

/** A schema's UID as EAS's SchemaRegistry computes it: `keccak256(abi.encodePacked(schema, resolver, revocable))`. */
export function easSchemaUid(schema: string, resolver: string, revocable: boolean): Hex {
  return keccak256(encodePacked(["string", "address", "bool"], [schema, getAddress(resolver), revocable]));
}

/**
 * `IAttestationExporter` as the API (the export calls it hands out, its start-up check) and the SDK (`exportToEAS`)
 * call it, with the errors of EAS an export can revert with, so that viem decodes a revert to its name.
 */
export const ATTESTATION_EXPORTER_ABI = parseAbi([
  "struct BalanceAttestation { uint8 chain; bytes32 owner; bytes32 asset; uint256 balance; bytes32 queryResultHash; uint64 sourceBlock; uint64 issuedAt; }",
  "struct ConditionAttestation { bytes32 conditionHash; bytes32 ownersHash; bool verdict; uint64 ethereumBlock; uint64 solanaSlot; uint64 issuedAt; }",
  "struct NodeSignature { address signer; uint256[] licenseIds; bytes signature; }",
  "function exportAttestation(BalanceAttestation attestation, NodeSignature[] signatures) returns (bytes32 uid)",
  "function exportConditionAttestation(ConditionAttestation attestation, NodeSignature[] signatures) returns (bytes32 uid)",
  "function uidOf(bytes32 answerHash) view returns (bytes32)",
  "function VERIFIER() view returns (address)",
  "function EAS() view returns (address)",
  "function BALANCE_SCHEMA_UID() view returns (bytes32)",
  "function CONDITION_SCHEMA_UID() view returns (bytes32)",
  "function MAX_EXPORT_AGE() view returns (uint256)",
  "event AttestationExported(bytes32 indexed answerHash, bytes32 indexed uid)",
  "error AttestationExporter_ZeroAddress()",
  // EAS's, should its call refuse (a schema not registered, the resolver's refusal).
  "error InvalidSchema()",
  "error InvalidAttestation()",
  "error NotPayable()",
]);

const address = (description: string) => z.string().check(z.regex(/^0x[0-9a-fA-F]{40}$/), z.describe(description));
const hex = (pattern: RegExp, description: string) => z.string().check(z.regex(pattern), z.describe(description));

/** `data.eas` (`?attest=true&eas=true`): the export as a transaction to send, and where to read it after. */
export const easExportJsonSchema = z.object({
  eas: address("EAS on the L2 (the exporter's EAS(): the OP predeploy), where EAS.getAttestation(uid) reads the exported attestation"),
  exporter: address("The network's AttestationExporter: send the call there, from any account"),
  schema: hex(/^0x[0-9a-f]{64}$/, "The schema UID the attestation is made under (keccak256(abi.encodePacked(schema, exporter, false)))"),
  function: z.enum(["exportAttestation", "exportConditionAttestation"]),
  calldata: hex(/^0x([0-9a-f]{2})+$/, "The transaction's data: the function with data.attestation's message and signatures"),
});
export type EasExportJson = z.infer<typeof easExportJsonSchema>;

type Signatures = readonly NodeSignature[];

function signaturesOf(signatures: Signatures) {
  return signatures.map(({ signer, licenseIds, signature }) => ({
    signer: getAddress(signer),
    licenseIds: [...licenseIds],
    signature: signature as Hex,
  }));
}

/** The exporter an answer's export call is for: its address and the EAS it exports to (`EAS()`). */
export interface EasExporter {
  address: string;
  eas: string;
}

/** `data.eas` of a signed balance, for `exporter`. */
export function balanceEasExport(exporter: EasExporter, attestation: BalanceAttestation, signatures: Signatures): EasExportJson {
  const { chain, owner, asset, balance, queryResultHash, sourceBlock, issuedAt } = attestation;
  const calldata = encodeFunctionData({
    abi: ATTESTATION_EXPORTER_ABI,
    functionName: "exportAttestation",
    args: [
      { chain, owner: owner as Hex, asset: asset as Hex, balance, queryResultHash: queryResultHash as Hex, sourceBlock, issuedAt },
      signaturesOf(signatures),
    ],
  });
  return exportJson(exporter, BALANCE_EAS_SCHEMA, "exportAttestation", calldata);
}

/** `data.eas` of a signed verdict, for `exporter`. */
export function conditionEasExport(exporter: EasExporter, attestation: ConditionAttestation, signatures: Signatures): EasExportJson {
  const { conditionHash, ownersHash, verdict, ethereumBlock, solanaSlot, issuedAt } = attestation;
  const calldata = encodeFunctionData({
    abi: ATTESTATION_EXPORTER_ABI,
    functionName: "exportConditionAttestation",
    args: [
      { conditionHash: conditionHash as Hex, ownersHash: ownersHash as Hex, verdict, ethereumBlock, solanaSlot, issuedAt },
      signaturesOf(signatures),
    ],
  });
  return exportJson(exporter, CONDITION_EAS_SCHEMA, "exportConditionAttestation", calldata);
}

function exportJson(exporter: EasExporter, schema: string, fn: EasExportJson["function"], calldata: Hex): EasExportJson {
  return {
    eas: getAddress(exporter.eas),
    exporter: getAddress(exporter.address),
    schema: easSchemaUid(schema, exporter.address, false),
    function: fn,
    calldata,
  };
}
