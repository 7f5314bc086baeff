import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";

import { attestationDomain, signAttestation } from "../../src/common/attestation.ts";
import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";
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

type Nodes = Array<{ burner: Signer; licenseIds: bigint[] }>;

/** Each node signs `attestation` with `sign` under `domain` for its licenses (the list it signs is the list it names). */
async function signEach<A>(
  sign: (signer: Signer, domain: AttestationDomain, attestation: A, licenseIds: bigint[]) => Promise<string>,
  domain: AttestationDomain,
  attestation: A,
  nodes: Nodes,
): Promise<NodeSignature[]> {
  return Promise.all(
    nodes.map(async ({ burner, licenseIds }) => ({
      signer: burner.address,
      licenseIds,
      signature: await sign(burner, domain, attestation, licenseIds),
    })),
  );
}

/** Each node signs the balance `attestation` under `domain` for its licenses, as a circuit node would. */
export const signAll = (domain: AttestationDomain, attestation: BalanceAttestation, nodes: Nodes) =>
  signEach((burner, ...rest) => signAttestation(balanceKind, burner, ...rest), domain, attestation, nodes);

/** Each node signs the verdict `attestation` under `domain` for its licenses, as a circuit node would. */
export const signConditionAll = (domain: AttestationDomain, attestation: ConditionAttestation, nodes: Nodes) =>
  signEach((burner, ...rest) => signAttestation(conditionKind, burner, ...rest), domain, attestation, nodes);

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
