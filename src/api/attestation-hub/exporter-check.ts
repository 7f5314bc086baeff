import { decodeFunctionResult, encodeFunctionData, getAddress, isAddressEqual, type Hex } from "viem";

import { ATTESTATION_EXPORTER_ABI } from "@avn/protocol/eas";

import type { JsonRpcPool } from "../../chains/rpc/json-rpc-pool.ts";

/** The exporter `?eas=true` answers for: its address and the EAS it exports to, as it states them. */
export interface ExporterSettings {
  address: string;
  eas: string;
}

/**
 * Reads `ATTESTATION_EXPORTER`'s verifier and EAS on the L2 at start, and refuses an exporter that checks with
 * another verifier than `ATTESTATION_VERIFIER`: every export call the API would hand out would revert
 * (`AttestationVerifier_WrongSigner`: the nodes sign for this verifier's domain).
 */
export async function readExporter(l2: Pick<JsonRpcPool, "request">, exporter: string, verifier: string): Promise<ExporterSettings> {
  const call = async (functionName: "VERIFIER" | "EAS") => {
    const data = encodeFunctionData({ abi: ATTESTATION_EXPORTER_ABI, functionName });
    const raw = await l2.request<Hex>("eth_call", [{ to: getAddress(exporter), data }, "latest"]);
    if (raw === "0x") throw new Error(`ATTESTATION_EXPORTER ${exporter} is not an AttestationExporter on the L2 (no code there)`);
    return decodeFunctionResult({ abi: ATTESTATION_EXPORTER_ABI, functionName, data: raw });
  };
  const [exporterVerifier, eas] = await Promise.all([call("VERIFIER"), call("EAS")]);
  if (!isAddressEqual(exporterVerifier, getAddress(verifier)))
    throw new Error(
      `ATTESTATION_EXPORTER ${exporter} checks answers with the verifier ${exporterVerifier}, not ATTESTATION_VERIFIER ${getAddress(verifier)}: ` +
        "every export would revert",
    );
  return { address: getAddress(exporter), eas };
}
