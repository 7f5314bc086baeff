import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";

import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import { expect } from "chai";
import { pino } from "pino";

import type { HubBus } from "../../../src/api/attestation-hub/bus/bus.ts";
import { RedisHubBus } from "../../../src/api/attestation-hub/bus/redis-bus.ts";
import { DEFAULT_PING_MS, PONG_ALLOWANCE_MS } from "../../../src/api/attestation-hub/sessions.ts";
import { attestationSettings, loadApiConfig } from "../../../src/api/config.ts";
import { ApiMetrics } from "../../../src/api/metrics.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { REDIS, startRedis } from "../../helpers/redis.ts";
import { requireService } from "../../helpers/services.ts";
import {
  connectNode,
  honestSigner,
  L2_CHAIN_ID,
  startAttestationL2,
  startHubApi,
  until,
  type AttestationL2,
  type LicensedNode,
} from "./fixture.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");
/** The hubs' ping interval here: short, so that a paused node is silent within PING_MS + PONG_ALLOWANCE_MS. */
const PING_MS = 200;
/** Longer than a node takes to go silent: a 503 that comes sooner is not the deadline's. */
const DEADLINE_MS = 10_000;
/** The bar of issue 53: once a needed node is silent, an attested answer is a 503 within this. */
const PROMPT_MS = 500;

/**
 * The node's attestation side as `scripts/node.ts` wires it (`startAttesting`: its configuration from the
 * environment, the real hub client and signers), in a process of its own, so that the test can pause it
 * with SIGSTOP: its socket stays open and it answers nothing, not even the hub's pings.
 */
const NODE_PROCESS = `
import { JsonRpcProvider, Wallet } from "ethers";
import { pino } from "pino";
import { createSourceReaders } from "./src/chains/source-readers.ts";
import { loadNodeConfig } from "./src/node/config.ts";
import { NodeMetrics } from "./src/node/health.ts";
import { startAttesting } from "./src/node/hub-client.ts";
const config = loadNodeConfig(process.env);
const chainId = BigInt(process.env.TEST_L2_CHAIN_ID);
const l2 = new JsonRpcProvider(config.L2_RPC_URLS[0], Number(chainId), { staticNetwork: true });
const wallet = new Wallet(process.env.TEST_BURNER_KEY, l2);
const licenseIds = process.env.TEST_LICENSE_IDS.split(",").map(BigInt);
const timeoutMs = config.UPSTREAM_TIMEOUT_MS;
const { evmRpc, evm } = createSourceReaders({
  evm: { urls: config.EVM_RPC_URLS, timeoutMs },
  solana: { urls: config.SOLANA_RPC_URLS, timeoutMs },
});
startAttesting(config, {
  wallet, chainId, evmRpc, evm, l2: () => l2, licenses: () => licenseIds,
  logger: pino({ level: config.LOG_LEVEL }), metrics: new NodeMetrics(),
});
`;

/** A node process: SIGSTOP and SIGCONT it, and see whether the kernel has it stopped. */
interface NodeProcess {
  child: ChildProcess;
  pause(): Promise<void>;
  resume(): void;
  kill(): Promise<void>;
}

/**
 * Issue 53: a node whose process is paused keeps its WebSocket open. The hub no longer counts it once it has
 * been silent past the ping interval (and its allowance): a round that needs it answers 503 at once, naming
 * the counts, and the node counts again as soon as it answers a ping, on the same connection. With several
 * instances, a silent node is not published as present either. A real hub (its own short ping interval), a
 * real L2, the node's real client in a process of its own paused with SIGSTOP, and a real Redis for the bus.
 */
describe("attestation hub: silent nodes are neither asked nor counted (issue 53)", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let l2: AttestationL2;
  const cleanups: Array<() => Promise<unknown>> = [];

  before(async function () {
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
  });
  afterEach(async function () {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  after(async function () {
    await l2?.stop();
    await sources?.stop();
  });

  /** The API with a hub that pings every `PING_MS`, as `ATTESTATION_PING_MS` configures it. */
  const startHub = async (bus?: (name: string) => Promise<HubBus>) => {
    const hubApi = await startHubApi(sources, l2, l2.verifier, { bus, deadlineMs: DEADLINE_MS, pingMs: PING_MS });
    cleanups.push(() => hubApi.api.close());
    return hubApi;
  };
  type Hub = Awaited<ReturnType<typeof startHub>>;

  /** `node`'s attestation client in a process of its own, connected to `hubUrl`. */
  const startNodeProcess = (hubUrl: string, node: LicensedNode): NodeProcess => {
    const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "--input-type=module", "-e", NODE_PROCESS], {
      cwd: projectRoot,
      env: {
        ...process.env,
        LOG_LEVEL: "silent",
        OWNERS_ALLOWLIST: node.owner.address,
        L2_RPC_URLS: l2.anvil.rpcUrl,
        VERIFICATION_REGISTRY: l2.verificationRegistry,
        EVM_RPC_URLS: sources.anvil.rpcUrl,
        SOLANA_RPC_URLS: sources.solanaRpc.url,
        ATTESTATION_HUB_URLS: hubUrl,
        ATTESTATION_VERIFIER: l2.verifier,
        TEST_L2_CHAIN_ID: String(L2_CHAIN_ID),
        TEST_BURNER_KEY: node.burner.privateKey,
        TEST_LICENSE_IDS: node.licenseIds.join(","),
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    // The kernel's word, not the signal's sending: state T in /proc/<pid>/stat (after the command's parentheses).
    const stopped = () => /\)\s+T\s/.test(readFileSync(`/proc/${child.pid}/stat`, "utf8"));
    const nodeProcess: NodeProcess = {
      child,
      async pause() {
        child.kill("SIGSTOP");
        await until("the node process stopped", stopped);
      },
      resume: () => void child.kill("SIGCONT"),
      async kill() {
        // SIGKILL ends a stopped process too.
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await exited;
      },
    };
    cleanups.push(() => nodeProcess.kill());
    return nodeProcess;
  };
  /** `node`'s real client and honest signer, in this process. */
  const connectHere = ({ hub, hubUrl }: Hub, node: LicensedNode) => {
    const stop = connectNode(hubUrl, node, honestSigner(sources, node, l2.verifier), { hubName: hub.name });
    cleanups.push(stop);
  };
  const attest = async ({ api }: Hub) => {
    const started = performance.now();
    const response = await fetch(`${api.baseUrl}/api/ccq-evm?attest=true`, {
      method: "POST",
      headers: { authorization: api.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 }),
    });
    const body = (await response.json()) as { message?: string; data?: { attestation: AttestationJson } };
    return { status: response.status, ms: performance.now() - started, body };
  };
  const signersOf = (answer: Awaited<ReturnType<typeof attest>>) =>
    (answer.body.data?.attestation.signatures ?? []).map((signature) => signature.signer).sort();
  const connectedHere = ({ hub }: Hub) =>
    hub.stats
      .list()
      .filter((entry) => entry.connected)
      .map((entry) => entry.burner)
      .sort();

  it("takes the ping interval from ATTESTATION_PING_MS: 15 s by default, 100 ms to 60 s", function () {
    const env = {
      EVM_RPC_URLS: "http://127.0.0.1:1",
      SOLANA_RPC_URLS: "http://127.0.0.1:2",
      ATTESTATION_L2_RPC_URL: "http://127.0.0.1:3",
      ATTESTATION_L2_WS_URL: "ws://127.0.0.1:3",
      ATTESTATION_NODE_REGISTRY: "0x0000000000000000000000000000000000010001",
      ATTESTATION_VERIFIER: "0x0000000000000000000000000000000000010003",
    };
    expect(DEFAULT_PING_MS).to.equal(15_000);
    expect(attestationSettings(loadApiConfig(env))?.pingMs).to.equal(DEFAULT_PING_MS);
    expect(attestationSettings(loadApiConfig({ ...env, ATTESTATION_PING_MS: "250" }))?.pingMs).to.equal(250);
    expect(attestationSettings(loadApiConfig({ ...env, ATTESTATION_PING_MS: "60000" }))?.pingMs).to.equal(60_000);
    for (const refused of ["99", "60001", "1.5", "soon"])
      expect(() => loadApiConfig({ ...env, ATTESTATION_PING_MS: refused }), refused).to.throw(/ATTESTATION_PING_MS/);
  });

  it("answers 503 within 500 ms once a needed node is silent, naming the counts; the node counts again once it answers a ping", async function () {
    const hubApi = await startHub();
    const [nodeA, nodeB] = l2.nodes;
    const burners = [nodeA, nodeB].map((node) => node.burner.address).sort();
    connectHere(hubApi, nodeA);
    const paused = startNodeProcess(hubApi.hubUrl, nodeB);
    await until("both nodes admitted", () => connectedHere(hubApi).join() === burners.join(), 60_000);
    // Quorum 2, two nodes of one license each: every answer needs the node process.
    const answered = await attest(hubApi);
    expect(answered.status, answered.body.message).to.equal(200);
    expect(signersOf(answered)).to.deep.equal(burners);
    const since = hubApi.hub.stats.get(nodeB.burner.address)?.connectedSince;

    await paused.pause();
    await until(
      "the paused node silent",
      () => hubApi.hub.silentNodes().includes(nodeB.burner.address),
      PING_MS + PONG_ALLOWANCE_MS + 5_000,
    );
    const refused = await attest(hubApi);
    expect(refused.status).to.equal(503);
    expect(refused.ms).to.be.below(PROMPT_MS);
    expect(refused.body.message).to.match(
      /^Attestation unavailable: 1 live license\(s\) connected and answering, quorum is 2 \(1 more connected but silent for (\d+) s\)$/,
    );
    // Silent past the ping interval and its allowance: 2 s at least.
    const seconds = Number(/silent for (\d+) s/.exec(refused.body.message ?? "")?.[1]);
    expect(seconds).to.be.at.least(Math.floor((PING_MS + PONG_ALLOWANCE_MS) / 1000));
    // Still connected: silence is not a disconnection.
    expect(connectedHere(hubApi)).to.deep.equal(burners);

    paused.resume();
    await until("the resumed node answering", () => !hubApi.hub.silentNodes().includes(nodeB.burner.address));
    const again = await attest(hubApi);
    expect(again.status, again.body.message).to.equal(200);
    expect(signersOf(again)).to.deep.equal(burners);
    // The same session: no new login.
    expect(hubApi.hub.stats.get(nodeB.burner.address)?.connectedSince).to.equal(since);
  });

  it("stops waiting for a node that goes silent during a round: 503 when it does, not at the deadline", async function () {
    const hubApi = await startHub();
    const [nodeA, nodeB] = l2.nodes;
    const burners = [nodeA, nodeB].map((node) => node.burner.address).sort();
    connectHere(hubApi, nodeA);
    const paused = startNodeProcess(hubApi.hubUrl, nodeB);
    await until("both nodes admitted", () => connectedHere(hubApi).join() === burners.join(), 60_000);

    // Paused, but not silent yet: the round asks it, and gives up on it once it is silent.
    await paused.pause();
    const answer = attest(hubApi);
    await until(
      "the paused node silent",
      () => hubApi.hub.silentNodes().includes(nodeB.burner.address),
      PING_MS + PONG_ALLOWANCE_MS + 5_000,
    );
    const silentAt = performance.now();
    const refused = await answer;
    expect(refused.status).to.equal(503);
    expect(performance.now() - silentAt).to.be.below(PROMPT_MS);
    expect(refused.ms).to.be.below(DEADLINE_MS);
    expect(refused.body.message).to.equal(
      "Attestation quorum not reached: every node asked has answered but 1 gone silent (no pong past the ping interval); the most licenses agreeing on one answer was 1 of quorum 2",
    );

    paused.resume();
    await until("the resumed node answering", () => !hubApi.hub.silentNodes().includes(nodeB.burner.address));
    const again = await attest(hubApi);
    expect(again.status, again.body.message).to.equal(200);
    expect(signersOf(again)).to.deep.equal(burners);
  });

  it("with two instances on Redis, a silent node is not published: the other instance answers 503 at once, and counts it again once it answers", async function () {
    const redis = await startRedis();
    if (redis === undefined) requireService(this, REDIS);
    cleanups.push(() => redis.stop());
    const secret = randomBytes(32).toString("hex");
    const bus = (name: string) => RedisHubBus.connect(redis.url, name, pino({ level: "silent" }), { secret, metrics: new ApiMetrics() });
    const holder = await startHub(bus);
    const other = await startHub(bus);
    const [nodeA, nodeB] = l2.nodes;
    const burners = [nodeA, nodeB].map((node) => node.burner.address).sort();
    // The node process on one instance, the other node on the instance asked.
    const paused = startNodeProcess(holder.hubUrl, nodeB);
    connectHere(other, nodeA);
    const connectedSeenByOther = async () =>
      (await other.hub.stats.listAll())
        .filter((entry) => entry.connected)
        .map((entry) => entry.burner)
        .sort()
        .join();
    await until("both nodes present for the instance asked", async () => (await connectedSeenByOther()) === burners.join(), 60_000);
    const answered = await attest(other);
    expect(answered.status, answered.body.message).to.equal(200);
    expect(signersOf(answered)).to.deep.equal(burners);

    await paused.pause();
    await until("the paused node withdrawn from the presence", async () => (await connectedSeenByOther()) === nodeA.burner.address, 10_000);
    expect(holder.hub.silentNodes()).to.deep.equal([nodeB.burner.address]);
    const refused = await attest(other);
    expect(refused.status).to.equal(503);
    expect(refused.ms).to.be.below(PROMPT_MS);
    // The other instance does not know of the silent node at all: the licenses it counts.
    expect(refused.body.message).to.equal("Attestation unavailable: 1 live license(s) connected, quorum is 2");

    paused.resume();
    await until("the resumed node present again", async () => (await connectedSeenByOther()) === burners.join());
    const again = await attest(other);
    expect(again.status, again.body.message).to.equal(200);
    expect(signersOf(again)).to.deep.equal(burners);
  });
});
