import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";

import { attestationDomain, signAttestation } from "../../src/common/attestation.ts";
import { signConditionAttestation } from "../../src/common/condition-attestation.ts";
import { type AttestationDomain, type BalanceAttestation, type NodeSignature } from "@avn/protocol/attestation";
import type { ConditionAttestation } from "@avn/protocol/conditions";
import { deployProtocol } from "./protocol.ts";

type Signer = Awaited<ReturnType<HardhatEthers["getSigners"]>>[number];

/** The domain of the verifier at `verifierAddress` on the connected chain. */
export async function domainOf(ethers: HardhatEthers, verifierAddress: string): Promise<AttestationDomain> {
  const { chainId } = await ethers.provider.getNetwork();
  return attestationDomain(chainId, verifierAddress);
}

/** An attestation of `fields` over defaults (an EVM holding, issued at the latest block's time). */
export async function attestationOf(ethers: HardhatEthers, fields: Partial<BalanceAttestation> = {}): Promise<BalanceAttestation> {
  const latest = await ethers.provider.getBlock("latest");
  return {
    chain: 0,
    owner: ethers.zeroPadValue("0x1111111111111111111111111111111111111111", 32),
    asset: ethers.zeroPadValue("0x2222222222222222222222222222222222222222", 32),
    balance: 183n,
    queryResultHash: ethers.keccak256(ethers.toBeHex(183n, 32)),
    sourceBlock: 1_000n,
    issuedAt: BigInt(latest!.timestamp),
    ...fields,
  };
}

/** Each node signs `attestation` under `domain` for its licenses (the list it signs is the list it names), as a circuit node would. */
export async function signAll(
  domain: AttestationDomain,
  attestation: BalanceAttestation,
  nodes: Array<{ burner: Signer; licenseIds: bigint[] }>,
): Promise<NodeSignature[]> {
  return Promise.all(
    nodes.map(async ({ burner, licenseIds }) => ({
      signer: burner.address,
      licenseIds,
      signature: await signAttestation(burner, domain, attestation, licenseIds),
    })),
  );
}

/** Each node signs the verdict `attestation` under `domain` for its licenses, as a circuit node would. */
export async function signConditionAll(
  domain: AttestationDomain,
  attestation: ConditionAttestation,
  nodes: Array<{ burner: Signer; licenseIds: bigint[] }>,
): Promise<NodeSignature[]> {
  return Promise.all(
    nodes.map(async ({ burner, licenseIds }) => ({
      signer: burner.address,
      licenseIds,
      signature: await signConditionAttestation(burner, domain, attestation, licenseIds),
    })),
  );
}

/**
 * The protocol of helpers/protocol.ts, with its attestation verifier's address and signing domain, and each
 * node as the signing helpers take it (its burner and its one license).
 */
export async function deployAttestationFixture(ethers: HardhatEthers) {
  const protocol = await deployProtocol(ethers);
  const verifierAddress = await protocol.attestationVerifier.getAddress();
  const domain = await domainOf(ethers, verifierAddress);
  const nodes = protocol.nodes.map(({ burner, licenseId }) => ({ burner, licenseIds: [licenseId] }));
  return { ...protocol, verifierAddress, domain, nodes };
}
