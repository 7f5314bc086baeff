import { Contract, NonceManager, Wallet, ZeroAddress, ZeroHash, type Provider } from "ethers";

import { AttestationExporter__factory } from "../../typechain-types/index.ts";
import type { NodeSignature } from "@avn/protocol/attestation";
import type { ConditionAttestation } from "@avn/protocol/conditions";
import { EAS_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import type { StackFile } from "../common/stack-file.ts";
import { easArtifact } from "../op/eas-artifacts.ts";

export interface ExportedVerdict {
  uid: string;
  /** What `EAS.getAttestation(uid)` reads: the attester, schema UID, recipient and data. */
  attester: string;
  schema: string;
  recipient: string;
  data: string;
  /** The export's gas (a default ethers wallet: its own estimate, no override), or undefined when exported before. */
  gasUsed: bigint | undefined;
}

/**
 * The demo collector exports a signed verdict to EAS through the stack's `AttestationExporter`, from a default
 * ethers wallet, and reads it back from EAS. A verdict exported before is not sent again: its first UID is read.
 */
export async function exportVerdictToEas(
  stack: StackFile,
  l2: Provider,
  signed: { attestation: ConditionAttestation; signatures: NodeSignature[] },
): Promise<ExportedVerdict> {
  const collector = new NonceManager(new Wallet(stack.accounts!.demoCollector.privateKey, l2));
  const exporter = AttestationExporter__factory.connect(stack.contracts!.l2!.AttestationExporter, collector);
  const eas = new Contract(stack.contracts!.l2!.EAS ?? EAS_PREDEPLOYS.EAS, easArtifact("EAS").abi, l2);
  const read = async (uid: string) =>
    (await eas.getFunction("getAttestation")(uid)) as { uid: string; attester: string; schema: string; recipient: string; data: string };
  // An export made before answers with its UID, which EAS holds; a new one's UID is only known once mined (its time).
  const simulated = await exporter.exportConditionAttestation.staticCall(signed.attestation, signed.signatures);
  let uid = simulated;
  let gasUsed: bigint | undefined;
  if ((await read(simulated)).uid !== simulated) {
    const receipt = (await (await exporter.exportConditionAttestation(signed.attestation, signed.signatures)).wait())!;
    const event = receipt.logs.map((log) => exporter.interface.parseLog(log)).find((parsed) => parsed?.name === "AttestationExported");
    uid = event!.args.uid as string;
    gasUsed = receipt.gasUsed;
  }
  const stored = await read(uid);
  return { uid, attester: stored.attester, schema: stored.schema, recipient: stored.recipient, data: stored.data, gasUsed };
}

/**
 * Another account (the demo collector) attests directly on EAS under the exporter's verdict schema: the
 * exporter, its resolver, refuses, and EAS reverts. Returns the revert's error name.
 */
export async function attestDirectlyOnEas(stack: StackFile, l2: Provider): Promise<string | undefined> {
  const collector = new NonceManager(new Wallet(stack.accounts!.demoCollector.privateKey, l2));
  const exporter = AttestationExporter__factory.connect(stack.contracts!.l2!.AttestationExporter, l2);
  const eas = new Contract(stack.contracts!.l2!.EAS ?? EAS_PREDEPLOYS.EAS, easArtifact("EAS").abi, collector);
  const request = {
    schema: await exporter.CONDITION_SCHEMA_UID(),
    data: { recipient: ZeroAddress, expirationTime: 0n, revocable: false, refUID: ZeroHash, data: "0x", value: 0n },
  };
  try {
    await (await eas.getFunction("attest").send(request)).wait();
    return undefined;
  } catch (error) {
    const data = (error as { data?: string }).data;
    return data === undefined ? undefined : eas.interface.parseError(data)?.name;
  }
}
