import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import { expect } from "chai";

import { Wallet } from "ethers";

import hre from "hardhat";
import { pino } from "pino";

import { AttestationHub } from "../../../src/api/attestation-hub/hub.ts";

import type { AttestationService } from "../../../src/api/attestation-hub/attested-query.ts";

import type { HubBus } from "../../../src/api/attestation-hub/bus/bus.ts";

import type { HubAdmissionOptions } from "../../../src/api/attestation-hub/sessions.ts";

import { DEFAULT_HUB_LABEL, HUB_PATH, hubName } from "../../../src/common/hub-protocol.ts";

import { ApiMetrics } from "../../../src/api/metrics.ts";

import { createSourceReaders } from "../../../src/chains/source-readers.ts";

import { createFailoverTransport } from "../../../src/chains/solana/failover-transport.ts";

import { attestationDomain, attestationFromJson } from "../../../src/common/attestation.ts";

import { balanceKind } from "@avn/protocol/attestation-kinds";

import { deployProtocolContracts } from "../../../src/deploy/contracts.ts";

import { devAccount } from "../../../src/devnet/accounts.ts";

import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import type { ExporterSettings } from "../../../src/api/attestation-hub/exporter-check.ts";

import type { SourceFixtures } from "../../../src/devnet/source-chains.ts";

import { AttestationSigner } from "../../../src/node/attestation-signer.ts";

import { DEFAULT_ATTESTATION_MAX_BLOCK_LAG } from "../../../src/node/config.ts";

import { ConditionSigner } from "../../../src/node/condition-signer.ts";

import type { SigningOptions } from "../../../src/node/signing-rules.ts";

import { connectToHub, l2HeadTimeReader, type HubClientOptions } from "../../../src/node/hub-client.ts";

import { PinnedReaders } from "../../../src/chains/pinned-readers.ts";

import { startTestApi, type TestApi } from "../../helpers/api.ts";

import { postOnOwnConnection, type RunningApiProcess } from "../../helpers/api-process.ts";

import { E18 } from "@avn/protocol/units";

export const L2_CHAIN_ID = 900n; // the devnetL1 network entry of hardhat.config.ts, pointed at this anvil
export const QUORUM = 2n;
/** anvil accounts: 0 deploys, 1 is the treasury, 2–5 own one license each, 6–9 are their burners. */
const OWNERS = [2, 3, 4, 5];
const BURNERS = [6, 7, 8, 9];

export interface LicensedNode {
  owner: Wallet;
  burner: Wallet;
  /** Its first license (the only one, unless `startAttestationL2` was given `licensesPerNode`). */
  licenseId: bigint;
  /** Every license delegated to its burner, ascending. */
  licenseIds: bigint[];
}

/**
 * An L2 of its own (anvil, chain 900) with PrimaryToken, StakedToken, NodeLicense, NodeRegistry and
 * VerificationRegistry deployed by module Protocol as in the other tests (quorum 2), four licenses bought
 * by four owners and delegated to four burners that heart-beat. `options.licensesPerNode` gives each of
 * up to four nodes that many licenses instead (and only those nodes), `options.quorum` another quorum.
 */
export async function startAttestationL2(options: { quorum?: bigint; licensesPerNode?: readonly number[] } = {}) {
  const licensesPerNode = options.licensesPerNode ?? OWNERS.map(() => 1);
  const licenseCount = licensesPerNode.reduce((sum, count) => sum + count, 0);
  const anvil = await startAnvil({ chainId: Number(L2_CHAIN_ID), disableCodeSizeLimit: hre.globalOptions.coverage });
  const connection = await hre.network.create({ network: "devnetL1", override: { url: anvil.rpcUrl } });
  const { ethers } = connection;
  const [admin, treasury] = await ethers.getSigners();
  const contracts = await deployProtocolContracts(connection, {
    tokens: { supplyRecipient: treasury.address, admin: admin.address, forfeitRecipient: treasury.address, adminTransferDelay: 0n },
    protocol: {
      admin: admin.address,
      treasury: treasury.address,
      adminTransferDelay: 0n,
      licenseMaxSupply: 100n,
      licensePriceTiers: [{ upToSupply: 100n, price: 100n * E18 }],
      quorum: options.quorum ?? QUORUM,
    },
  });
  const nodes: LicensedNode[] = [];
  if (licensesPerNode.length > OWNERS.length || licenseCount > 100) throw new Error("at most four nodes and 100 licenses");
  let nextLicenseId = 1n;
  for (const [index, count] of licensesPerNode.entries()) {
    const owner = new Wallet(devAccount(OWNERS[index]).privateKey, ethers.provider);
    const burner = new Wallet(devAccount(BURNERS[index]).privateKey, ethers.provider);
    const price = BigInt(count) * 100n * E18;
    await (await contracts.primary.connect(treasury).transfer(owner.address, price)).wait();
    await (await contracts.primary.connect(owner).approve(await contracts.license.getAddress(), price)).wait();
    await (await contracts.license.connect(owner).buy(BigInt(count), price)).wait();
    const licenseIds = Array.from({ length: count }, (_, offset) => nextLicenseId + BigInt(offset));
    nextLicenseId += BigInt(count);
    await (await contracts.nodeRegistry.connect(owner).delegate(licenseIds, burner.address)).wait();
    await (await contracts.nodeRegistry.connect(burner)["heartbeat(uint32)"](100)).wait();
    nodes.push({ owner, burner, licenseId: licenseIds[0], licenseIds });
  }
  return {
    anvil,
    ethers,
    contracts,
    nodes,
    nodeRegistry: await contracts.nodeRegistry.getAddress(),
    verifier: await contracts.attestationVerifier.getAddress(),
    verificationRegistry: await contracts.registry.getAddress(),
    async stop() {
      await connection.close();
      await anvil.stop();
    },
  };
}
export type AttestationL2 = Awaited<ReturnType<typeof startAttestationL2>>;

/**
 * Limits before login for tests that are not about them: every test node connects from 127.0.0.1, and a
 * test may log in and be refused several times in a row.
 */
const ROOMY_ADMISSION = {
  publicUrls: undefined,
  maxPending: 256,
  maxPendingPerAddress: 64,
  hellosPerSecond: 1_000,
  refusalMemoryMs: 60_000,
};
/** Each test hub's name by its URL, so `connectNode` keeps its (hub URL, node, signer) form. */
const hubNames = new Map<string, string>();

/** The API with its hub over the source fixtures and `l2`; `verifier` is the EIP-712 verifying contract. */
export async function startHubApi(
  sources: SourceFixtures,
  l2: AttestationL2,
  verifier: string,
  options: {
    deadlineMs?: number;
    /** Round results sent a second (the hub's default otherwise). */
    resultsPerSecond?: number;
    confirmations?: number;
    /** How often the hub pings each node (`ATTESTATION_PING_MS`; the hub's default otherwise): a node is silent past it and its allowance. */
    pingMs?: number;
    admission?: HubAdmissionOptions;
    /** Joins this hub to others (a `RedisHubBus`): several instances of one hub in this process. */
    bus?: (hubName: string) => Promise<HubBus>;
    /** The test API's own options (rate-limit policy, `attestCost`, usage metering). */
    api?: Parameters<typeof startTestApi>[1];
    /** An `AttestationExporter` on `l2`, as the API reads it at start: `?eas=true` answers with its export call (501 without). */
    exporter?: ExporterSettings;
  } = {},
) {
  const metrics = new ApiMetrics();
  const hub = await AttestationHub.create({
    l2RpcUrl: l2.anvil.rpcUrl,
    l2WsUrl: l2.anvil.wsUrl,
    nodeRegistry: l2.nodeRegistry,
    attestationVerifier: verifier,
    hubLabel: DEFAULT_HUB_LABEL,
    admission: {
      ...ROOMY_ADMISSION,
      ...options.admission,
      publicUrls: options.admission?.publicUrls?.slice(),
      trustedProxies: [...(options.admission?.trustedProxies ?? [])],
    },
    bus: options.bus,
    deadlineMs: options.deadlineMs ?? 1_500,
    resultsPerSecond: options.resultsPerSecond,
    evmConfirmations: options.confirmations ?? 0,
    recheckMs: 60_000, // tests call recheck() themselves
    pingMs: options.pingMs,
    metrics,
    logger: pino({ level: "silent" }),
  });
  const readers = createSourceReaders({
    evm: { urls: [sources.anvil.rpcUrl], timeoutMs: 2_000 },
    solana: { urls: [sources.solanaRpc.url], timeoutMs: 2_000 },
  });
  const pinned = new PinnedReaders(readers.evmRpc, createFailoverTransport({ urls: [sources.solanaRpc.url], timeoutMs: 2_000 }));
  const service: AttestationService = { hub, pinned, evm: readers.evm, solana: readers.solana, exporter: options.exporter };
  const api: TestApi = await startTestApi(sources, { ...options.api, metrics, attestation: service });
  const hubUrl = `${api.baseUrl.replace(/^http/, "ws")}${HUB_PATH}`;
  const name = hubName(DEFAULT_HUB_LABEL, L2_CHAIN_ID, verifier);
  hubNames.set(hubUrl, name);
  return { api, hub, metrics, hubUrl, hubName: name, service };
}

/** The source chains a node reads: its own readers over their RPC endpoints (another node may be pointed elsewhere). */
type NodeSources = Pick<SourceFixtures, "anvil" | "solanaRpc">;

/** A node's own pinned readers and the signing rules of `node` (its key, domain, licenses, tolerances). */
function nodeSigning(
  sources: NodeSources,
  node: LicensedNode,
  verifier: string,
  licenses: () => readonly bigint[],
  options: { l2HeadTime?: () => Promise<bigint>; maxClockSkewSeconds?: number },
): SigningOptions & { pinned: PinnedReaders } {
  const l2 = node.burner.provider;
  if (l2 === null) throw new Error("the node's burner is not connected to the L2");
  const readers = createSourceReaders({
    evm: { urls: [sources.anvil.rpcUrl], timeoutMs: 2_000 },
    solana: { urls: [sources.solanaRpc.url], timeoutMs: 2_000 },
  });
  return {
    wallet: node.burner,
    domain: attestationDomain(L2_CHAIN_ID, verifier),
    pinned: new PinnedReaders(readers.evmRpc, createFailoverTransport({ urls: [sources.solanaRpc.url], timeoutMs: 2_000 })),
    evmHead: () => readers.evm.latestBlock(),
    licenses,
    maxBlockLag: DEFAULT_ATTESTATION_MAX_BLOCK_LAG,
    l2HeadTime: options.l2HeadTime ?? l2HeadTimeReader(() => l2, { maxAgeMs: 0 }),
    maxClockSkewSeconds: options.maxClockSkewSeconds ?? 10, // the node's default
  };
}

/**
 * An honest node's signer: reads the sources itself at the pinned position, and checks the issue time
 * against its own view of the L2 head, read through its burner's provider (connected to the L2 by
 * `startAttestationL2`) unless `options.l2HeadTime` is given. The read is not reused (`maxAgeMs` 0, only
 * concurrent reads are shared): the test L2 mines a block per transaction, so two blocks may be far apart
 * in time and a second-old view could be a long way behind the hub's.
 */
export function honestSigner(
  sources: NodeSources,
  node: LicensedNode,
  verifier: string,
  licenses: () => readonly bigint[] = () => node.licenseIds,
  options: { l2HeadTime?: () => Promise<bigint>; maxClockSkewSeconds?: number } = {},
) {
  return new AttestationSigner(nodeSigning(sources, node, verifier, licenses, options));
}

/** An honest node's condition signer, under the same rules and readers as `honestSigner`'s. */
export function honestConditionSigner(
  sources: NodeSources,
  node: LicensedNode,
  verifier: string,
  licenses: () => readonly bigint[] = () => node.licenseIds,
  options: { l2HeadTime?: () => Promise<bigint>; maxClockSkewSeconds?: number } = {},
) {
  return new ConditionSigner(nodeSigning(sources, node, verifier, licenses, options));
}

/**
 * A node process's hub client, in this process: the real WebSocket client with `signer` (and
 * `options.conditionSigner`, else condition requests are refused), naming its one license, requiring the
 * name of the hub `startHubApi` started at `hubUrl` (or `options.hubName`).
 */
export function connectNode(
  hubUrl: string,
  node: LicensedNode,
  signer: Pick<AttestationSigner, "answer">,
  options: {
    hubName?: string;
    urls?: string[];
    conditionSigner?: Pick<ConditionSigner, "answer">;
    onSigned?: HubClientOptions["onSigned"];
    onRoundDone?: HubClientOptions["onRoundDone"];
  } = {},
) {
  return connectToHub({
    urls: options.urls ?? [hubUrl],
    hubName: options.hubName ?? hubNames.get(hubUrl) ?? "unknown hub",
    chainId: L2_CHAIN_ID,
    wallet: node.burner,
    signer,
    conditionSigner: options.conditionSigner,
    onSigned: options.onSigned,
    onRoundDone: options.onRoundDone,
    licenses: () => node.licenseIds,
    logger: pino({ level: "silent" }),
    firstRetryMs: 100,
    maxRetryMs: 200,
  });
}

/** Polls `check` every 50 ms until it holds, or fails after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export type { AnvilInstance };

/** What `GET /attest/nodes` answers, as much of it as the tests read. */
export type NodesAnswer = { nodes: Array<{ burner: string; connected: boolean; asked: number; answers: Record<string, number> }> };

/**
 * What the tests of several API processes ask each process (`RunningApiProcess`): its nodes, the burners
 * connected to it, and one attested ERC-20 answer that must have a quorum of distinct licenses and be valid
 * on-chain. The context is read when a probe runs (the suites assign it in their `before` hooks).
 */
export function hubProcessProbes(context: () => { sources: SourceFixtures; apiKey: string; l2: AttestationL2 }) {
  /** `GET /attest/nodes`, or undefined for its 503: the process's bus not reaching Redis (yet), "retry shortly". */
  const listingOf = async (api: RunningApiProcess) => {
    const response = await fetch(`http://127.0.0.1:${api.port}/attest/nodes`, { headers: { connection: "close" } });
    const body = await response.text();
    if (response.status === 503) return undefined;
    expect(response.status, `GET /attest/nodes from port ${api.port}: ${body}`).to.equal(200);
    return (JSON.parse(body) as NodesAnswer).nodes;
  };
  const nodesOf = async (api: RunningApiProcess) => {
    const nodes = await listingOf(api);
    expect(nodes, `GET /attest/nodes from port ${api.port}: 503 (its bus does not reach Redis)`).to.not.equal(undefined);
    return nodes!;
  };
  /**
   * The burners connected, sorted; undefined while the listing is a 503. A process whose bus could not reach
   * Redis within its start's wait (a loaded machine) starts without it and joins when a probe is answered:
   * until then it cannot list the other processes' nodes, and says so.
   */
  const connectedOf = async (api: RunningApiProcess) =>
    (await listingOf(api))
      ?.filter((node) => node.connected)
      .map((node) => node.burner)
      .sort();
  /** One attested ERC-20 answer from `api` (on a connection of its own): 200, a quorum of distinct licenses, valid on-chain. */
  const expectAttested = async (api: RunningApiProcess) => {
    const { sources, apiKey, l2 } = context();
    const response = await postOnOwnConnection(sources, api.port, apiKey, "/api/ccq-evm?attest=true");
    expect(response.status, response.body).to.equal(200);
    const json = (JSON.parse(response.body) as { data: { attestation: AttestationJson } }).data.attestation;
    expect(BigInt(new Set(json.signatures.flatMap((signature) => signature.licenseIds)).size)).to.be.at.least(QUORUM);
    const { attestation, signatures } = attestationFromJson(balanceKind, json);
    expect(await l2.contracts.attestationVerifier.isAttestationValid(attestation, signatures, 3_600n)).to.equal(true);
    return json;
  };
  return { nodesOf, connectedOf, expectAttested };
}
