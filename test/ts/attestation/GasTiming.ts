import { expect } from "chai";
import { toQuantity, zeroPadValue, keccak256, toBeHex, type Wallet } from "ethers";

import { attestationDomain, signAttestation } from "../../../src/common/attestation.ts";
import { balanceKind } from "@avn/protocol/attestation-kinds";
import { type BalanceAttestation, type NodeSignature } from "@avn/protocol/attestation";
import { E18 } from "@avn/protocol/units";
import { L2_CHAIN_ID, startAttestationL2, type AttestationL2 } from "./fixture.ts";

/**
 * A default ethers v6 or viem client sends exactly `eth_estimateGas`'s figure, estimated at the pending
 * block, and the transaction is mined in a later one. So the gas of a valid attestation's checks must not
 * depend on the block's time or number: estimated with block overrides (anvil) at times across the
 * validity window, every figure must be the same.
 */
describe("AttestationVerifier: gas independent of the block's time and number", function () {
  this.timeout(60_000);
  let l2: AttestationL2;
  let consumer: Wallet;

  before(async function () {
    l2 = await startAttestationL2();
    consumer = l2.nodes[3].owner; // holds no license in the quorum below; pays from its collateral
    const { primary, registry } = l2.contracts;
    const treasury = (await l2.ethers.getSigners())[1];
    await (await primary.connect(treasury).transfer(consumer.address, 1_000n * E18)).wait();
    await (await primary.connect(consumer).approve(await registry.getAddress(), 1_000n * E18)).wait();
    await (await registry.connect(consumer).stakeCollateral(consumer.address, 1_000n * E18)).wait();
  });
  after(async function () {
    await l2?.stop();
  });

  /** An attestation issued at the time of a block mined now (a second after the last), signed by the first two nodes (quorum 2). */
  async function signedNow(balance: bigint): Promise<{ attestation: BalanceAttestation; signatures: NodeSignature[] }> {
    const previous = await l2.ethers.provider.getBlock("latest");
    await l2.ethers.provider.send("evm_mine", [previous!.timestamp + 1]);
    const latest = await l2.ethers.provider.getBlock("latest");
    const attestation: BalanceAttestation = {
      chain: 0,
      owner: zeroPadValue("0x1111111111111111111111111111111111111111", 32),
      asset: zeroPadValue("0x2222222222222222222222222222222222222222", 32),
      balance,
      queryResultHash: keccak256(toBeHex(balance, 32)),
      sourceBlock: 1_000n,
      issuedAt: BigInt(latest!.timestamp),
    };
    const domain = attestationDomain(L2_CHAIN_ID, l2.verifier);
    const signatures = await Promise.all(
      l2.nodes.slice(0, 2).map(async (node) => ({
        signer: node.burner.address,
        licenseIds: [node.licenseId],
        signature: await signAttestation(balanceKind, node.burner, domain, attestation, [node.licenseId]),
      })),
    );
    return { attestation, signatures };
  }

  /** `eth_estimateGas` of `data` sent to the verifier by the consumer, in a block with this time and number. */
  async function estimateAt(data: string, time: bigint, number: bigint): Promise<bigint> {
    const overrides = { time: toQuantity(time), number: toQuantity(number) };
    const tx = { from: consumer.address, to: l2.verifier, data };
    return BigInt(await l2.ethers.provider.send("eth_estimateGas", [tx, "latest", {}, overrides]));
  }

  /** The estimates of `data` at each time, with a block number that moves too. */
  async function estimatesAt(data: string, times: bigint[]): Promise<bigint[]> {
    const head = BigInt(await l2.ethers.provider.getBlockNumber());
    return Promise.all(times.map((time, index) => estimateAt(data, time, head + 1n + BigInt(index) * 1_000n)));
  }

  /** The error message of a call expected to revert (anvil names a custom error by its selector). */
  async function revertOf(call: Promise<unknown>): Promise<string> {
    return call.then(
      () => "no revert",
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
  }

  function selectorOf(error: string): string {
    return l2.contracts.attestationVerifier.interface.getError(error)!.selector.slice(2);
  }

  it("records a subject's first and later attestations for the same gas at any time of the recording window", async function () {
    const verifier = l2.contracts.attestationVerifier;
    const maxRecordAge = await verifier.MAX_RECORD_AGE();
    const liveness = await l2.contracts.nodeRegistry.livenessWindow();
    // The last heartbeat bounds the window too: past it the licenses are no longer live.
    const window = maxRecordAge < liveness ? maxRecordAge : liveness;
    for (const phase of ["first", "later"]) {
      const { attestation, signatures } = await signedNow(phase === "first" ? 5n : 6n);
      const data = verifier.interface.encodeFunctionData("recordAttestation", [attestation, signatures]);
      const { issuedAt } = attestation;
      const figures = await estimatesAt(data, [issuedAt, issuedAt + 1n, issuedAt + 2n, issuedAt + window / 2n, issuedAt + window - 60n]);
      expect(new Set(figures).size, `${phase} record: ${figures.join(", ")}`).to.equal(1);
      // The overrides take effect: a block before the issue time refuses the attestation.
      expect(await revertOf(estimateAt(data, issuedAt - 1n, 1n))).to.include(selectorOf("AttestationVerifier_IssuedInFuture"));
      await (await verifier.connect(consumer).recordAttestation(attestation, signatures)).wait();
    }
  });

  it("checks an attestation in a view for the same gas whether the block is behind its issue time or past it", async function () {
    const verifier = l2.contracts.attestationVerifier;
    const skew = await verifier.MAX_CLOCK_SKEW();
    // Within the liveness window (600 s) of the last heartbeat, so that every time below has live licenses.
    const maxAge = 300n;
    const { attestation, signatures } = await signedNow(7n);
    const { issuedAt } = attestation;
    const times = [issuedAt - skew, issuedAt - 1n, issuedAt, issuedAt + 1n, issuedAt + maxAge];
    const calls = {
      isAttestationValid: verifier.interface.encodeFunctionData("isAttestationValid", [attestation, signatures, maxAge]),
      checkAttestation: verifier.interface.encodeFunctionData("checkAttestation", [attestation, signatures, maxAge]),
    };
    for (const [name, data] of Object.entries(calls)) {
      const figures = await estimatesAt(data, times);
      expect(new Set(figures).size, `${name}: ${figures.join(", ")}`).to.equal(1);
    }
    // Just outside the window on either side checkAttestation reverts: the times above were all inside it.
    expect(await revertOf(estimateAt(calls.checkAttestation, issuedAt + maxAge + 1n, 1n))).to.include(
      selectorOf("AttestationVerifier_StaleAttestation"),
    );
    expect(await revertOf(estimateAt(calls.checkAttestation, issuedAt - skew - 1n, 1n))).to.include(
      selectorOf("AttestationVerifier_IssuedInFuture"),
    );
  });
});
