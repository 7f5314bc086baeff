import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";
import { getBytes, keccak256, toBeHex, toUtf8Bytes, zeroPadValue } from "ethers";

import { attestationDomain, signAttestation } from "../common/attestation.ts";
import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";
import { type BalanceAttestation } from "@avn/protocol/attestation";
import { ownersHash, type ConditionAttestation } from "@avn/protocol/conditions";
import { queryResultHash } from "../common/query-result.ts";
import { gasOf, type GasRow } from "./gas.ts";
import { deployGasBenchProtocol, formatTargetTable } from "./verification-gas.ts";

/** The attested path's gas targets (issues 13 and 32), by operation name. */
export const ATTESTATION_GAS_TARGETS: Array<{ operation: string; atMost: bigint; reference: string }> = [
  { operation: "AttestationVerifier.isAttestationValid (execution)", atMost: 32_000n, reference: "<= 32k execution gas" },
  // Issue 32: a condition verdict is checked under the same rules, so it costs what a balance check does.
  {
    operation: "AttestationVerifier.isConditionAttestationValid (execution)",
    atMost: 35_000n,
    reference: "<= 35k execution gas",
  },
  { operation: "AttestationVerifier.recordAttestation (new subject)", atMost: 110_000n, reference: "<= 110k gas used" },
  { operation: "AttestationVerifier.recordAttestation (subject recorded before)", atMost: 95_000n, reference: "<= 95k gas used" },
];

/** The benchmarks' verdict: "yes" about `holder` and a linked Solana owner, issued at `issuedAt`. */
export function benchVerdict(holder: string, issuedAt: bigint): ConditionAttestation {
  return {
    conditionHash: keccak256(toUtf8Bytes("bench condition")),
    ownersHash: ownersHash({ ethereum: holder, solana: "So11111111111111111111111111111111111111112" }),
    verdict: true,
    ethereumBlock: 1_000n,
    solanaSlot: 2_000n,
    issuedAt,
  };
}

/**
 * The gas benchmarks' protocol at quorum 2 of 3 (`deployGasBenchProtocol`), with licenses 1, 2 and 3 delegated to
 * the three operators, each live (a heartbeat sent).
 */
export async function deployLiveQuorumOfTwo(ethers: HardhatEthers) {
  const deployed = await deployGasBenchProtocol(ethers, 2n);
  const { license, nodeRegistry, owner, operators } = deployed;
  await license.connect(owner).buy(3n, ethers.MaxUint256);
  for (const [index, operator] of operators.entries()) {
    await nodeRegistry.connect(owner).delegate([BigInt(index + 1)], operator.address);
    await nodeRegistry.connect(operator)["heartbeat(uint32)"](120);
  }
  return deployed;
}

/**
 * Measures, at quorum 2 of 3 on one fresh deployment, what a verified balance costs by each path: the job
 * path (request, first vote, finalizing vote, warm epoch) and the attested path (the view checks' execution
 * gas, of a balance and of a condition verdict: the call's gas less the transaction base and calldata; a
 * recording's whole transaction, for a subject recorded before and for a new one).
 */
export async function measureAttestationGas(ethers: HardhatEthers): Promise<GasRow[]> {
  const { primary, registry, attestationVerifier, operators, consumer } = await deployLiveQuorumOfTwo(ethers);
  const [operatorA, operatorB] = operators;

  const holder = ethers.Wallet.createRandom().address;
  const token = await primary.getAddress();
  const vote = (jobId: bigint, licenseId: bigint) => ({
    jobId,
    licenseIds: [licenseId],
    owner: zeroPadValue(holder, 32),
    asset: zeroPadValue(token, 32),
    balance: 183n,
    queryResultHash: queryResultHash(toBeHex(183n, 32)),
    sourceBlock: 1_000n,
  });
  // The job path, warm: job 1 makes the licenses and the epoch earn first; job 2 is measured.
  const jobPath = async () => {
    const jobId = await registry.nextJobId();
    const request = await gasOf(registry.connect(consumer).requestEvmBalance(holder, token));
    const votes =
      (await gasOf(registry.connect(operatorA).submitResults([vote(jobId, 1n)]))) +
      (await gasOf(registry.connect(operatorB).submitResults([vote(jobId, 2n)])));
    return { request, votes };
  };
  await jobPath();
  const job = await jobPath();
  const jobRows: GasRow[] = [
    { operation: "job path: requestEvmBalance", gasUsed: job.request },
    { operation: "job path: node votes (first + finalizing)", gasUsed: job.votes },
    { operation: "job path: per verified balance", gasUsed: job.request + job.votes },
  ];

  const { chainId } = await ethers.provider.getNetwork();
  const domain = attestationDomain(chainId, await attestationVerifier.getAddress());
  const attest = async (subjectHolder: string, issuedAt: bigint) => {
    const attestation: BalanceAttestation = {
      chain: 0,
      owner: zeroPadValue(subjectHolder, 32),
      asset: zeroPadValue(token, 32),
      balance: 183n,
      queryResultHash: queryResultHash(toBeHex(183n, 32)),
      sourceBlock: 1_000n,
      issuedAt,
    };
    const signatures = await Promise.all(
      operators.slice(0, 2).map(async (operator, index) => ({
        signer: operator.address,
        licenseIds: [BigInt(index + 1)],
        signature: await signAttestation(balanceKind, operator, domain, attestation, [BigInt(index + 1)]),
      })),
    );
    return { attestation, signatures };
  };
  const now = async () => BigInt((await ethers.provider.getBlock("latest"))!.timestamp);

  // The view is sent as a transaction so that its receipt states exactly the gas it used (an estimate adds
  // the 63/64 margin of its inner call); execution gas is that less the transaction's base and calldata.
  const check = await attest(holder, await now());
  const data = attestationVerifier.interface.encodeFunctionData("isAttestationValid", [check.attestation, check.signatures, 3600n]);
  // A refused attestation costs less than a valid one: measure only what verifies.
  if (!(await attestationVerifier.isAttestationValid(check.attestation, check.signatures, 3600n))) {
    throw new Error("the measured balance attestation does not verify");
  }
  const viewGas = await gasOf(consumer.sendTransaction({ to: await attestationVerifier.getAddress(), data }));
  const rows: GasRow[] = [{ operation: "AttestationVerifier.isAttestationValid (execution)", gasUsed: viewGas - intrinsicGas(data) }];

  // A verdict over both chains' holdings of the holder and a linked Solana owner, measured as the balance view is.
  const condition = benchVerdict(holder, await now());
  const conditionSignatures = await Promise.all(
    operators.slice(0, 2).map(async (operator, index) => ({
      signer: operator.address,
      licenseIds: [BigInt(index + 1)],
      signature: await signAttestation(conditionKind, operator, domain, condition, [BigInt(index + 1)]),
    })),
  );
  const conditionData = attestationVerifier.interface.encodeFunctionData("isConditionAttestationValid", [
    condition,
    conditionSignatures,
    3600n,
  ]);
  if (!(await attestationVerifier.isConditionAttestationValid(condition, conditionSignatures, 3600n))) {
    throw new Error("the measured condition attestation does not verify");
  }
  const conditionGas = await gasOf(consumer.sendTransaction({ to: await attestationVerifier.getAddress(), data: conditionData }));
  rows.push({
    operation: "AttestationVerifier.isConditionAttestationValid (execution)",
    gasUsed: conditionGas - intrinsicGas(conditionData),
  });

  const newSubject = await attest(ethers.Wallet.createRandom().address, await now());
  rows.push({
    operation: "AttestationVerifier.recordAttestation (new subject)",
    gasUsed: await gasOf(attestationVerifier.connect(consumer).recordAttestation(newSubject.attestation, newSubject.signatures)),
  });
  const recorded = await attest(holder, await now());
  await attestationVerifier.connect(consumer).recordAttestation(recorded.attestation, recorded.signatures);
  const again = await attest(holder, (await now()) + 1n);
  rows.push({
    operation: "AttestationVerifier.recordAttestation (subject recorded before)",
    gasUsed: await gasOf(attestationVerifier.connect(consumer).recordAttestation(again.attestation, again.signatures)),
  });
  return [...jobRows, ...rows];
}

/** The transaction base cost and calldata cost of `data` (EIP-2028 prices), which execution gas leaves out. */
function intrinsicGas(data: string): bigint {
  let gas = 21_000n;
  for (const byte of getBytes(data)) gas += byte === 0 ? 4n : 16n;
  return gas;
}

/** Formats the attested path's rows with their targets. */
export function formatAttestationTable(rows: GasRow[]): string {
  return formatTargetTable(rows, ATTESTATION_GAS_TARGETS, "operation (quorum 2 of 3, one run)");
}
