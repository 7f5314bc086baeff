import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { expect } from "chai";
import { network } from "hardhat";
import { createPublicClient, custom, getAddress, keccak256, toBytes, type EIP1193Provider } from "viem";
import { readContract } from "viem/actions";

import { attestationDomain, attestationToJson } from "../../../src/common/attestation.ts";
import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";
import type { AttestationDomain, BalanceAttestation } from "@avn/protocol/attestation";
import type { ConditionAttestation } from "@avn/protocol/conditions";
import {
  attestationDigest,
  attestationTypedData,
  attestationVerifierAbi,
  conditionHash,
  InvalidArgumentError,
  MalformedAttestationError,
  LICENSED_BALANCE_ATTESTATION_TYPE,
  LICENSED_CONDITION_ATTESTATION_TYPE,
  ownersHash,
  toContractAttestation,
  verifyAttestation,
  type AttestationJson,
  type ConditionAttestationJson,
} from "../../../packages/sdk/src/index.ts";
import { attestationOf, deployAttestationFixture, signAll, signConditionAll } from "../../helpers/attestations.ts";
import { LIVENESS_WINDOW } from "../../helpers/protocol.ts";

const { ethers, networkHelpers, provider } = await network.create();
const { loadFixture, setCode, time } = networkHelpers;

/**
 * viem over Hardhat's in-process network: the SDK's reads go to the same chain the fixture deployed on. No
 * transport retries: viem would retry the in-process network's revert errors with backoff.
 */
const publicClient = createPublicClient({ transport: custom(provider as EIP1193Provider, { retryCount: 0 }) });

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const OWNER = "0x1111111111111111111111111111111111111111";
/** Runtime code that answers every call with the word 1: an `isAttestationValid` that always says true. */
const ANSWERS_TRUE = "0x600160005260206000f3";
/** Runtime code that answers every call with the word 0: false from the boolean views, no revert from the checks. */
const ANSWERS_ZERO = "0x60206000f3";
/** Addresses of no account, where the tests put such code. */
const ATTACKER_VERIFIER = "0x00000000000000000000000000000000a77ac4e5";
const SILENT_VERIFIER = "0x000000000000000000000000000000005113e475";
/** A game's condition: 100 units of a token on Ethereum. */
const CONDITION = { chain: "ethereum", contract_address: "0x2222222222222222222222222222222222222222", min: "100" };

const fixture = () => deployAttestationFixture(ethers);

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** The API's JSON of `attestation` signed by `nodes` (default: the first two, quorum 2 of 3), through JSON text as a client gets it. */
async function balanceJson(
  f: Fixture,
  fields: Partial<BalanceAttestation> = {},
  options: { nodes?: Fixture["nodes"]; domain?: AttestationDomain } = {},
): Promise<AttestationJson> {
  const attestation = await attestationOf(ethers, fields);
  const domain = options.domain ?? f.domain;
  const signatures = await signAll(domain, attestation, options.nodes ?? f.nodes.slice(0, 2));
  return JSON.parse(JSON.stringify(attestationToJson(balanceKind, domain, attestation, signatures))) as AttestationJson;
}

/** A signed verdict on `CONDITION` for `OWNER`, issued at the latest block's time, signed as the nodes sign it (under `domain`). */
async function conditionJson(
  f: Fixture,
  fields: Partial<ConditionAttestation> = {},
  domain: AttestationDomain = f.domain,
): Promise<ConditionAttestationJson> {
  const attestation: ConditionAttestation = {
    conditionHash: conditionHash(CONDITION),
    ownersHash: ownersHash({ ethereum: OWNER }),
    verdict: true,
    ethereumBlock: 21_000_000n,
    solanaSlot: 0n,
    issuedAt: BigInt(await time.latest()),
    ...fields,
  };
  const signatures = await signConditionAll(domain, attestation, f.nodes.slice(0, 2));
  return JSON.parse(JSON.stringify(attestationToJson(conditionKind, domain, attestation, signatures))) as ConditionAttestationJson;
}

describe("@avn/sdk typed data and verification against AttestationVerifier", function () {
  describe("the digest of every attestation kind is the contract's", function () {
    it("hashes a balance attestation as hashAttestation does, for any license list, with the pinned type string", async function () {
      const f = await loadFixture(fixture);
      expect(await f.attestationVerifier.LICENSED_BALANCE_ATTESTATION_TYPEHASH()).to.equal(
        keccak256(toBytes(LICENSED_BALANCE_ATTESTATION_TYPE)),
      );
      const json = await balanceJson(f, { chain: 1, balance: 2n ** 255n + 9007199254753337n, sourceBlock: 2n ** 64n - 1n });
      const { attestation } = toContractAttestation(json);
      expect(attestation.balance).to.equal(2n ** 255n + 9007199254753337n);
      for (const licenseIds of [[], [7n], [3n, 1n, 2n ** 96n - 1n]]) {
        const onChain = await f.attestationVerifier.hashAttestation(attestation, licenseIds);
        expect(attestationDigest(json, licenseIds), `licenses ${licenseIds.join(",")}`).to.equal(onChain);
        // The SDK's ABI encodes the struct in the contract's field order.
        const throughSdkAbi = await readContract(publicClient, {
          address: f.domain.verifyingContract as `0x${string}`,
          abi: attestationVerifierAbi,
          functionName: "hashAttestation",
          args: [attestation, licenseIds],
        });
        expect(throughSdkAbi).to.equal(onChain);
      }
      // Another list is another digest: the licenses are signed.
      expect(attestationDigest(json, [1n, 2n])).to.not.equal(attestationDigest(json, [2n, 1n]));
    });

    it("hashes a condition attestation as hashConditionAttestation does, for either verdict", async function () {
      const f = await loadFixture(fixture);
      expect(await f.attestationVerifier.LICENSED_CONDITION_ATTESTATION_TYPEHASH()).to.equal(
        keccak256(toBytes(LICENSED_CONDITION_ATTESTATION_TYPE)),
      );
      const digests = new Set<string>();
      for (const verdict of [true, false]) {
        const json = await conditionJson(f, { verdict, solanaSlot: 2n ** 64n - 1n });
        const { attestation } = toContractAttestation(json);
        expect(attestation.verdict).to.equal(verdict);
        for (const licenseIds of [[], [2n], [3n, 1n]]) {
          const onChain = await f.attestationVerifier.hashConditionAttestation(attestation, licenseIds);
          expect(attestationDigest(json, licenseIds), `verdict ${verdict}, licenses ${licenseIds.join(",")}`).to.equal(onChain);
          const throughSdkAbi = await readContract(publicClient, {
            address: f.domain.verifyingContract as `0x${string}`,
            abi: attestationVerifierAbi,
            functionName: "hashConditionAttestation",
            args: [attestation, licenseIds],
          });
          expect(throughSdkAbi).to.equal(onChain);
          digests.add(onChain);
        }
      }
      expect(digests.size).to.equal(6);
    });

    it("refuses malformed JSON with a MalformedAttestationError whose path names the field", async function () {
      const f = await loadFixture(fixture);
      const json = await balanceJson(f);
      const verdict = await conditionJson(f);
      const cases: Array<[string, unknown]> = [
        ["", null],
        ["domain", { ...json, domain: "Asset Verification Network" }],
        ["domain.version", { ...json, domain: { ...json.domain, version: 1 } }],
        ["domain.chainId", { ...json, domain: { ...json.domain, chainId: "0x10" } }],
        ["domain.verifyingContract", { ...json, domain: { ...json.domain, verifyingContract: "0x1234" } }],
        ["signatures", { ...json, signatures: {} }],
        ["signatures[1].signer", { ...json, signatures: [json.signatures[0], { ...json.signatures[1], signer: "nobody" }] }],
        ["signatures[0].licenseIds[0]", { ...json, signatures: [{ ...json.signatures[0], licenseIds: [""] }] }],
        ["signatures[0].signature", { ...json, signatures: [{ ...json.signatures[0], signature: "0xzz" }] }],
        ["message.balance", { ...json, message: { ...json.message, balance: "-1" } }],
        ["message.chain", { ...json, message: { ...json.message, chain: 256 } }],
        ["message.owner", { ...json, message: { ...json.message, owner: OWNER } }],
        // `"false"` is a truthy string: never read as a verdict.
        ["message.verdict", { ...verdict, message: { ...verdict.message, verdict: "false" } }],
      ];
      for (const [path, malformed] of cases)
        expect(() => toContractAttestation(malformed as AttestationJson), path || "the attestation")
          .to.throw(MalformedAttestationError)
          .that.includes({ code: "MALFORMED_ATTESTATION", path });
      // A license list given alongside the JSON is checked alike.
      expect(() => attestationTypedData(json, [1n, -2n]))
        .to.throw(MalformedAttestationError, "licenseIds[1] must be a uint256")
        .with.property("path", "licenseIds[1]");
      expect(() => attestationDigest(json, [1.5]))
        .to.throw(MalformedAttestationError)
        .with.property("path", "licenseIds[0]");
    });
  });

  describe("verifyAttestation", function () {
    it("accepts a quorum-signed balance attestation on-chain (client or RPC URL) and off-chain", async function () {
      const f = await loadFixture(fixture);
      const json = await balanceJson(f, { balance: 9007199254753337n });
      const expected = { signers: [f.burnerA.address, f.burnerB.address], licenseIds: [1n, 2n] };
      expect(await verifyAttestation(json, { publicClient })).to.deep.equal({ valid: true, ...expected, onChain: true });
      const rpc = await jsonRpcFront();
      try {
        expect(await verifyAttestation(json, { rpcUrl: rpc.url })).to.deep.equal({ valid: true, ...expected, onChain: true });
        expect(rpc.calls).to.include("eth_call");
      } finally {
        await rpc.close();
      }
      const issuedAt = BigInt(json.message.issuedAt);
      expect(await verifyAttestation(json, { now: issuedAt + 10n })).to.deep.equal({ valid: true, ...expected, onChain: false });
    });

    it("names the contract's error for a tampered, a too-old and an under-signed attestation", async function () {
      const f = await loadFixture(fixture);
      const json = await balanceJson(f);

      // One field changed after signing: every signature recovers to someone else.
      const tampered = { ...json, message: { ...json.message, balance: "184" } };
      const wrong = await verifyAttestation(tampered, { publicClient });
      expect(wrong).to.include({ valid: false, reason: "AttestationVerifier_WrongSigner" });
      expect(wrong.detail).to.match(/^AttestationVerifier_WrongSigner\(0, 0x[0-9a-fA-F]{40}\)$/);
      // …which is what the contract says of it too.
      const { attestation, signatures } = toContractAttestation(tampered);
      await expect(f.attestationVerifier.checkAttestation(attestation, signatures, 3_600n)).to.be.revertedWithCustomError(
        f.attestationVerifier,
        "AttestationVerifier_WrongSigner",
      );

      // Short of the quorum: only the chain knows the quorum, and says so.
      const alone = await balanceJson(f, {}, { nodes: f.nodes.slice(0, 1) });
      expect(await verifyAttestation(alone, { publicClient })).to.deep.equal({
        valid: false,
        reason: "AttestationVerifier_QuorumNotReached",
        detail: "AttestationVerifier_QuorumNotReached(1, 2)",
        signers: [f.burnerA.address],
        licenseIds: [1n],
        onChain: true,
      });

      // Too old for the caller's maxAge, by the chain's clock; off-chain, by the clock given.
      await time.increase(120);
      const stale = await verifyAttestation(json, { publicClient, maxAge: 60 });
      expect(stale).to.deep.include({ valid: false, reason: "AttestationVerifier_StaleAttestation", onChain: true });
      expect(stale.detail).to.equal(`AttestationVerifier_StaleAttestation(${json.message.issuedAt}, 60)`);
      expect(await verifyAttestation(json, { publicClient, maxAge: 3_600 })).to.include({ valid: true });
      const offChain = await verifyAttestation(json, { maxAge: 60, now: BigInt(json.message.issuedAt) + 61n });
      expect(offChain).to.include({ valid: false, reason: "AttestationVerifier_StaleAttestation", onChain: false });

      // Nodes that stopped beating: their licenses no longer count.
      await time.increase(LIVENESS_WINDOW);
      expect(await verifyAttestation(json, { publicClient, maxAge: 3_600 })).to.include({
        valid: false,
        reason: "AttestationVerifier_LicenseNotLive",
      });
    });

    it("refuses a malleable signature and padded licenses off-chain with the contract's own errors", async function () {
      const f = await loadFixture(fixture);
      const json = await balanceJson(f);
      const malleable = {
        ...json,
        signatures: [{ ...json.signatures[0], signature: malleableTwin(json.signatures[0].signature) }, json.signatures[1]],
      };
      expect(await verifyAttestation(malleable, { publicClient })).to.include({
        valid: false,
        reason: "AttestationVerifier_MalleableSignature",
      });
      const twin = toContractAttestation(malleable);
      await expect(f.attestationVerifier.checkAttestation(twin.attestation, twin.signatures, 3_600n)).to.be.revertedWithCustomError(
        f.attestationVerifier,
        "AttestationVerifier_MalleableSignature",
      );
      // Off-chain, ages are judged by the clock given: the chain's here, which earlier tests moved ahead of this computer's.
      const now = BigInt(await time.latest());
      // A license appended to a signature's list by whoever carried it: the list is signed.
      const padded = { ...json, signatures: [{ ...json.signatures[0], licenseIds: ["1", "3"] }, json.signatures[1]] };
      expect(await verifyAttestation(padded, { now })).to.include({ valid: false, reason: "AttestationVerifier_WrongSigner" });
      const twice = { ...json, signatures: [json.signatures[0], json.signatures[0]] };
      expect(await verifyAttestation(twice, { now })).to.include({ valid: false, reason: "AttestationVerifier_DuplicateLicense" });
      expect(await verifyAttestation({ ...json, signatures: [] }, { now })).to.include({
        valid: false,
        reason: "AttestationVerifier_QuorumNotReached",
      });
      expect(await verifyAttestation({ ...json, message: { ...json.message, balance: "-1" } })).to.include({
        valid: false,
        reason: "MalformedAttestation",
        detail: "message.balance must be a uint256, written as a decimal string",
      });
    });

    it("accepts a signed verdict, and refuses a flipped or stale one with the contract's errors", async function () {
      const f = await loadFixture(fixture);
      const json = await conditionJson(f, { verdict: false });
      expect(await verifyAttestation(json, { publicClient })).to.include({ valid: true, onChain: true });
      const flipped = { ...json, message: { ...json.message, verdict: true } };
      expect(await verifyAttestation(flipped, { publicClient })).to.include({ valid: false, reason: "AttestationVerifier_WrongSigner" });
      const { attestation, signatures } = toContractAttestation(flipped);
      expect(await f.attestationVerifier.isConditionAttestationValid(attestation, signatures, 3_600n)).to.equal(false);
      await time.increase(300);
      expect(await verifyAttestation(json, { publicClient, maxAge: 60 })).to.include({
        valid: false,
        reason: "AttestationVerifier_StaleAttestation",
        onChain: true,
      });
      // A verdict written as a string is not a verdict.
      const stringly = { ...json, message: { ...json.message, verdict: "false" as unknown as boolean } };
      expect(await verifyAttestation(stringly, { now: BigInt(await time.latest()) })).to.include({
        valid: false,
        reason: "MalformedAttestation",
      });
    });

    it("refuses an attestation naming a verifier of its own when `verifier` is set, without calling anything", async function () {
      const f = await loadFixture(fixture);
      // Anyone's keys, anyone's contract: an outsider signs for a "verifier" of theirs that says true to everything.
      await setCode(ATTACKER_VERIFIER, ANSWERS_TRUE);
      const forged = await balanceJson(
        f,
        { balance: 10n ** 30n },
        { nodes: [{ burner: f.outsider, licenseIds: [7n] }], domain: attestationDomain(f.domain.chainId, ATTACKER_VERIFIER) },
      );
      // Without `verifier`, valid under the verifier it names: what the option is for.
      expect(await verifyAttestation(forged, { publicClient })).to.include({ valid: true, onChain: true });

      const counting = countingClient();
      for (const verifier of [f.verifierAddress as `0x${string}`, f.verifierAddress.toLowerCase() as `0x${string}`]) {
        const refused = await verifyAttestation(forged, { publicClient: counting.client, verifier });
        expect(refused).to.deep.equal({
          valid: false,
          reason: "UnexpectedVerifier",
          detail: `The attestation names the verifier ${getAddress(ATTACKER_VERIFIER)}, not the one trusted, ${verifier}`,
          signers: [f.outsider.address],
          licenseIds: [7n],
          onChain: false,
        });
        // Off-chain too.
        expect(await verifyAttestation(forged, { verifier, now: BigInt(await time.latest()) })).to.include({
          valid: false,
          reason: "UnexpectedVerifier",
        });
      }
      expect(counting.methods).to.deep.equal([]);

      // The network's own attestation passes with its verifier, in any case.
      const genuine = await balanceJson(f);
      for (const verifier of [f.verifierAddress as `0x${string}`, f.verifierAddress.toLowerCase() as `0x${string}`])
        expect(await verifyAttestation(genuine, { publicClient, verifier })).to.include({ valid: true, onChain: true });
      await expectInvalidArgument(verifyAttestation(genuine, { publicClient, verifier: "0x1234" }), "options.verifier");
      // maxAge and now: integers of 0 or more (BigInt would refuse 1.5 with a bare RangeError).
      await expectInvalidArgument(verifyAttestation(genuine, { publicClient, maxAge: 1.5 }), "options.maxAge");
      await expectInvalidArgument(verifyAttestation(genuine, { maxAge: -1n }), "options.maxAge");
      await expectInvalidArgument(verifyAttestation(genuine, { now: Number.NaN }), "options.now");
    });

    it("fails closed when the boolean view says false and the check view names no error", async function () {
      const f = await loadFixture(fixture);
      await setCode(SILENT_VERIFIER, ANSWERS_ZERO);
      const domain = attestationDomain(f.domain.chainId, SILENT_VERIFIER);
      const json = await balanceJson(f, {}, { domain });
      expect(await verifyAttestation(json, { publicClient })).to.deep.equal({
        valid: false,
        reason: "InvalidWithoutReason",
        detail: `The verifier at ${getAddress(SILENT_VERIFIER)} answered false, and its check view named no error`,
        signers: [f.burnerA.address, f.burnerB.address],
        licenseIds: [1n, 2n],
        onChain: true,
      });
      expect(await verifyAttestation(await conditionJson(f, {}, domain), { publicClient })).to.include({
        valid: false,
        reason: "InvalidWithoutReason",
        onChain: true,
      });
    });

    it("says when the client is on another chain, or no verifier answers at the domain's address", async function () {
      const f = await loadFixture(fixture);
      const elsewhere = await balanceJson(f, {}, { domain: attestationDomain(999n, f.verifierAddress) });
      expect(await verifyAttestation(elsewhere, { publicClient })).to.include({ valid: false, reason: "ChainIdMismatch", onChain: true });
      // Signed for this chain, but for an address that holds no contract.
      const nowhere = await balanceJson(f, {}, { domain: attestationDomain(f.domain.chainId, f.outsider.address) });
      expect(await verifyAttestation(nowhere, { publicClient })).to.include({ valid: false, reason: "NoVerifierContract", onChain: true });
      const renamed = await balanceJson(f, {}, { domain: { ...f.domain, name: "Another Network" } });
      expect(await verifyAttestation(renamed, { now: BigInt(await time.latest()) })).to.include({
        valid: false,
        reason: "UnsupportedDomain",
      });
    });
  });
});

/** A viem client on the test's network that records every JSON-RPC method it is asked. */
function countingClient() {
  const methods: string[] = [];
  const client = createPublicClient({
    transport: custom(
      {
        request: ({ method, params }: { method: string; params?: unknown }) => {
          methods.push(method);
          return provider.request({ method, params: params as unknown[] });
        },
      },
      { retryCount: 0 },
    ),
  });
  return { client, methods };
}

async function expectInvalidArgument(call: Promise<unknown>, argument: string): Promise<void> {
  const outcome = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(outcome).to.be.instanceOf(InvalidArgumentError);
  expect(outcome).to.include({ code: "INVALID_ARGUMENT", argument });
  expect((outcome as Error).message).to.match(new RegExp(`^${argument.replace(".", "\\.")} must be`));
}

/** The same signature with `s` replaced by `n - s` and `v` flipped: it recovers to the same signer, and the contract refuses it. */
function malleableTwin(signature: string): string {
  const r = signature.slice(2, 66);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = Number.parseInt(signature.slice(130, 132), 16);
  return `0x${r}${(SECP256K1_N - s).toString(16).padStart(64, "0")}${(v === 27 ? 28 : 27).toString(16)}`;
}

/** A JSON-RPC endpoint over HTTP in front of Hardhat's in-process network, so that `rpcUrl` is exercised. */
async function jsonRpcFront(): Promise<{ url: string; calls: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const server: Server = createServer((request, response) => {
    void (async () => {
      let body = "";
      for await (const chunk of request) body += String(chunk);
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      calls.push(method);
      const answer = await provider.request({ method, params }).then(
        (result) => ({ jsonrpc: "2.0", id, result }),
        (error: { code?: number; message: string; data?: unknown }) => ({
          jsonrpc: "2.0",
          id,
          error: { code: error.code ?? -32000, message: error.message, data: error.data },
        }),
      );
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
