import { chown, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

import { expect } from "chai";
import { NonceManager, parseEther, Wallet, type JsonRpcProvider } from "ethers";

import {
  NodeLicense__factory,
  NodeRegistry__factory,
  PrimaryToken__factory,
  VerificationRegistry__factory,
} from "../../../typechain-types/index.ts";
import { attestationFromJson } from "../../../src/common/attestation.ts";
import { balanceKind } from "@avn/protocol/attestation-kinds";
import { HUB_PATH } from "../../../src/common/hub-protocol.ts";
import type { StackFile } from "../../../src/common/stack-file.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { postToApi } from "../../../src/devnet/demo-verify.ts";
import { eventArgs } from "../../../src/devnet/events.ts";
import { bridgePrimaryTokens, OWNER_TOKENS } from "../../../src/devnet/network-setup.ts";
import type { VerificationNetwork } from "../../../src/devnet/verification-network.ts";
import { BURNER_FILE } from "../../../src/node/burner.ts";
import { STATE_FILE } from "../../../src/node/main.ts";
import { buildNodeImage, type BuiltImage } from "../../../src/tooling/image/build.ts";
import { createContainer, type Container, type RunningContainer } from "../../../src/tooling/image/container.ts";
import { detectEngine, type Engine } from "../../../src/tooling/image/engine.ts";
import { formatReport, imageReport } from "../../../src/tooling/image/report.ts";
import { JobStatus } from "@avn/protocol/constants";
import type { TestDevnet } from "../../helpers/devnet.ts";
import { eventually } from "../../helpers/devnet.ts";
import { requireService } from "../../helpers/services.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/**
 * The image's operator: an account of its own, which no other suite uses (NETWORK_ACCOUNTS and the devnet's
 * take 0 to 11), so the license it buys is this suite's alone.
 */
const IMAGE_OWNER = 12;
/** An account with no license: the allowlist of the refusal test. */
const OUTSIDER = 13;
/** The image's user (the official image's `node`): the owner a host folder mounted at /app/cache needs. */
const IMAGE_UID = 1000;

/** What the image's test needs of the end-to-end network it shares. */
export interface NodeImageSuiteContext {
  test: TestDevnet;
  stack: StackFile;
  l2: JsonRpcProvider;
  network: VerificationNetwork;
}

interface LogLine {
  msg?: string;
  burner?: string;
  generated?: boolean;
  keyFile?: string;
  instructions?: string;
  licenses?: string[];
  delegated?: number;
}

const parsed = (lines: string[]): LogLine[] => lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as LogLine);

/**
 * The circuit node's container image, built from the Dockerfile (with buildah from a base made on this machine
 * where no engine runs) and run as docs/node.md tells an operator: a fresh host folder at /app/cache, the
 * stack's RPC URLs and addresses in the environment, the license owner in OWNERS_ALLOWLIST. The burner is read
 * from the container's log, a license delegated to it and the burner funded; then it heartbeats, votes, signs.
 * It keeps its burner across a restart and never votes twice; without its owner in the allowlist it refuses.
 */
export function describeNodeImage(context: () => NodeImageSuiteContext): void {
  describe("the circuit node's container image, run as an operator runs it", function () {
    this.timeout(180_000);
    let engine: Engine;
    let built: BuiltImage;
    let cacheDir: string;
    /** The image's container (buildah: made once, its command run again on each start, as `docker restart`). */
    let box: Container | undefined;
    let container: RunningContainer | undefined;
    let burner: string;
    let licenseId: bigint;
    const owner = devAccount(IMAGE_OWNER);
    const paused = new Set<number>();

    const pauseNodes = (...indexes: number[]) => {
      for (const index of indexes) {
        context().network.nodes[index].child.kill("SIGSTOP");
        paused.add(index);
      }
    };
    const resumeNodes = () => {
      for (const index of paused) context().network.nodes[index].child.kill("SIGCONT");
      paused.clear();
    };
    const registry = () => VerificationRegistry__factory.connect(context().stack.contracts!.l2!.VerificationRegistry, context().l2);
    const votesOn = async (jobId: bigint) =>
      (await registry().queryFilter(registry().filters.VoteSubmitted(jobId))).map((event) => event.args.licenseId);
    /** The container of the image, as `docker run -v <cacheDir>:/app/cache -e …` starts it. */
    const runImage = (allowlist: string) => {
      const { stack } = context();
      return box!.start({
        volumes: [{ host: cacheDir, container: "/app/cache" }],
        env: {
          OWNERS_ALLOWLIST: allowlist,
          L2_RPC_URLS: stack.l2!.rpcUrl,
          L2_WS_URL: stack.l2!.wsUrl,
          VERIFICATION_REGISTRY: stack.contracts!.l2!.VerificationRegistry,
          EVM_RPC_URLS: stack.l1!.rpcUrl,
          SOLANA_RPC_URLS: context().network.solana.url,
          ATTESTATION_HUB_URLS: `${stack.api!.baseUrl.replace(/^http/, "ws")}${HUB_PATH}`,
          ATTESTATION_VERIFIER: stack.contracts!.l2!.AttestationVerifier,
          // As the network's own nodes in this file: short intervals, and no confirmations on anvil.
          POLL_INTERVAL_MS: "500",
          HEARTBEAT_INTERVAL_SECONDS: "3",
          CONFIRMATIONS: "0",
        },
      });
    };
    /** Resolves once the container's log holds what `accept` looks for, checked at each new line of it. */
    const logged = (what: string, accept: (lines: LogLine[]) => boolean, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const running = container!;
        const check = () => {
          if (!accept(parsed(running.lines()))) return;
          finish();
          resolve();
        };
        // A deadline for the failure message (the log's tail), not a wait: the line ends the wait when it comes.
        const deadline = AbortSignal.timeout(timeoutMs);
        const giveUp = () => {
          finish();
          reject(new Error(`${what}: not in the container's log within ${timeoutMs} ms\n${running.lines().slice(-30).join("\n")}`));
        };
        deadline.addEventListener("abort", giveUp, { once: true });
        const unsubscribe = running.onOutput(check);
        const finish = () => {
          deadline.removeEventListener("abort", giveUp);
          unsubscribe();
        };
        check();
      });
    const openEvmJob = async () => {
      const { stack, l2 } = context();
      const consumer = new NonceManager(new Wallet(stack.accounts!.consumer.privateKey, l2));
      const [evm] = stack.demo!.evm;
      const receipt = await (await registry().connect(consumer).requestEvmBalance(evm.user_address, evm.contract_address)).wait();
      return eventArgs(receipt, "VerificationRequested").jobId as bigint;
    };

    before(async function () {
      this.timeout(1_200_000);
      const found = await detectEngine();
      if (found === undefined)
        requireService(this, {
          name: "buildah",
          missing: "not installed, nor a Docker or Podman engine running",
          install: "apt-get install buildah debootstrap (or start Docker or Podman)",
        });
      engine = found;
      const { test, stack, l2 } = context();
      const deployer = new NonceManager(new Wallet(stack.accounts!.deployer.privateKey, l2));
      // The owner's primary tokens come over the bridge, as every owner's do; meanwhile the image is built (in
      // `npm test` its own phase built it already, and this build finds it up to date).
      const began = performance.now();
      await Promise.all([
        (async () => {
          built = await buildNodeImage({ engine, root: projectRoot, onProgress: (line) => console.log(`      (${line})`) });
          box = await createContainer(engine, built.tag);
        })(),
        (async () => {
          await bridgePrimaryTokens(
            {
              l1: test.devnet.l1Provider,
              l2,
              deployer: stack.accounts!.deployer,
              contracts: {
                l1PrimaryToken: test.deployment!.l1PrimaryToken,
                l1StandardBridge: test.devnet.l1Contracts.L1StandardBridge,
                l2: { PrimaryToken: stack.contracts!.l2!.PrimaryToken },
              },
            },
            [{ to: owner.address, amount: OWNER_TOKENS }],
          );
          // Gas for its own transactions, and the ether it sends the burner.
          await (await deployer.sendTransaction({ to: owner.address, value: parseEther("3") })).wait();
        })(),
      ]);
      console.log(`      (image and its container ready in ${((performance.now() - began) / 1000).toFixed(1)} s)`);
      const report = await imageReport(engine, built.tag, engine.kind === "buildah" ? built.base : undefined, { contents: false });
      console.log(
        formatReport(report)
          .map((line) => `      ${line}`)
          .join("\n"),
      );
      // The bar: the node (its dependencies, the ABIs, its code) adds at most 150 MB to the base.
      if (report.base !== undefined) expect(report.bytes - report.base.bytes).to.be.at.most(150_000_000);
      // A fresh host folder, given to the image's user as docs/node.md says (`chown 1000:1000`).
      cacheDir = await mkdtemp(path.join(tmpdir(), "node-image-cache-"));
      await chown(cacheDir, IMAGE_UID, IMAGE_UID);
    });
    after(async function () {
      this.timeout(60_000);
      resumeNodes();
      await container?.stop();
      await box?.remove();
      if (cacheDir !== undefined) await rm(cacheDir, { recursive: true, force: true });
    });

    it("starts as the image's non-root user on a fresh cache folder, creates its burner there and says what to do", async function () {
      container = runImage(owner.address);
      await logged("the burner", (lines) => lines.some((line) => line.msg === "burner wallet"));
      const line = parsed(container.lines()).find((entry) => entry.msg === "burner wallet")!;
      expect(line).to.include({ generated: true, keyFile: `/app/cache/${BURNER_FILE}` });
      burner = line.burner!;
      // Written by the image's user into the host folder, readable by it alone.
      const key = await stat(path.join(cacheDir, BURNER_FILE));
      expect([key.uid, key.mode & 0o777]).to.deep.equal([IMAGE_UID, 0o600]);
      await logged("the delegation instructions", (lines) =>
        lines.some((entry) => entry.msg === "waiting for delegation" && entry.instructions!.includes(burner)),
      );
    });

    it("heartbeats, votes on a job that finalizes and signs an attested answer once a license is delegated to its burner and the burner funded", async function () {
      const { stack, l2 } = context();
      const contracts = stack.contracts!.l2!;
      const signer = new NonceManager(new Wallet(owner.privateKey, l2));
      const license = NodeLicense__factory.connect(contracts.NodeLicense, signer);
      const price = await license.quote(1n);
      await (await PrimaryToken__factory.connect(contracts.PrimaryToken, signer).approve(contracts.NodeLicense, price)).wait();
      licenseId = eventArgs(await (await license.buy(1n, price)).wait(), "LicensesPurchased").firstId as bigint;
      // Two of the network's three nodes stand still, so the job's quorum of 2 needs the container's vote.
      pauseNodes(1, 2);
      try {
        await (await NodeRegistry__factory.connect(contracts.NodeRegistry, signer).delegate([licenseId], burner)).wait();
        const delegatedAt = performance.now();
        await (await signer.sendTransaction({ to: burner, value: parseEther("1") })).wait();
        const jobId = await openEvmJob();
        const nodeRegistry = NodeRegistry__factory.connect(contracts.NodeRegistry, l2);
        await eventually(
          async () => (await nodeRegistry.heartbeatOf(burner)).timestamp,
          (timestamp) => timestamp > 0n,
          60_000,
        );
        const heartbeatMs = performance.now() - delegatedAt;
        await eventually(
          () => votesOn(jobId),
          (votes) => votes.includes(licenseId),
          60_000,
        );
        const voteMs = performance.now() - delegatedAt;
        await eventually(
          async () => (await registry().getResult(jobId)).status,
          (status) => status === JobStatus.finalized,
          60_000,
        );
        expect((await registry().getResult(jobId)).balance).to.equal(BigInt(stack.demo!.evm[0].balance));
        console.log(
          `      (from the delegation mined: first heartbeat seen after ${(heartbeatMs / 1000).toFixed(1)} s, the container's first vote after ${(voteMs / 1000).toFixed(1)} s)`,
        );

        // The attested answer: the hub admits the container, and a quorum needs its signature.
        await eventually(
          async () =>
            ((await (await fetch(`${stack.api!.baseUrl}/attest/nodes`)).json()) as { nodes: Array<{ burner: string; connected: boolean }> })
              .nodes,
          (nodes) => nodes.some((node) => node.connected && node.burner.toLowerCase() === burner.toLowerCase()),
          30_000,
        );
        const [evm] = stack.demo!.evm;
        const text = await postToApi(
          stack,
          { chain: "evm", user_address: evm.user_address, contract_address: evm.contract_address },
          "?attest=true",
        );
        const { attestation, signatures } = attestationFromJson(balanceKind, JSON.parse(text).data.attestation);
        expect(attestation.balance).to.equal(BigInt(evm.balance));
        expect(
          signatures.some((entry) => entry.signer.toLowerCase() === burner.toLowerCase() && entry.licenseIds.includes(licenseId)),
        ).to.equal(true);
      } finally {
        resumeNodes();
      }
    });

    it("keeps its burner when restarted on the same folder, and does not vote twice for a job it answered", async function () {
      const { stack, l2 } = context();
      // The network's nodes stand still: the container's vote is the job's only one, and the job stays open.
      pauseNodes(0, 1, 2);
      try {
        const jobId = await openEvmJob();
        await eventually(
          () => votesOn(jobId),
          (votes) => votes.includes(licenseId),
          60_000,
        );
        const restartBlock = await l2.getBlockNumber();
        expect(await container!.stop()).to.equal(0);
        // Its scan position erased, the restarted node reads the job's block again and must leave the job alone.
        const journal = new DatabaseSync(path.join(cacheDir, STATE_FILE));
        journal.prepare("DELETE FROM meta WHERE key = 'cursor'").run();
        journal.close();
        const journalCursor = () => {
          const reader = new DatabaseSync(path.join(cacheDir, STATE_FILE));
          try {
            const row = reader.prepare("SELECT value FROM meta WHERE key = 'cursor'").get() as { value: string } | undefined;
            return row === undefined ? undefined : Number(row.value);
          } finally {
            reader.close();
          }
        };
        container = runImage(owner.address);
        await logged("the restarted node's passes", (lines) => lines.some((line) => line.msg === "answering jobs"));
        const line = parsed(container.lines()).find((entry) => entry.msg === "burner wallet")!;
        expect(line).to.include({ burner, generated: false });
        // Its journal's cursor at or past the head of the restart: the job's block has been read again.
        await eventually(
          async () => journalCursor(),
          (cursor) => cursor !== undefined && cursor >= restartBlock,
          60_000,
        );
        expect((await registry().getJob(jobId)).status).to.equal(JobStatus.open);
        for (let block = restartBlock + 1; block <= (await l2.getBlockNumber()); block += 1)
          for (const tx of (await l2.getBlock(block, true))!.prefetchedTransactions) {
            if (
              tx.from.toLowerCase() !== burner.toLowerCase() ||
              tx.to?.toLowerCase() !== stack.contracts!.l2!.VerificationRegistry.toLowerCase()
            )
              continue;
            const jobIds = (registry().interface.parseTransaction(tx)!.args[0] as Array<{ jobId: bigint }>).map((entry) => entry.jobId);
            expect(jobIds, `transaction ${tx.hash} of the restarted container`).to.not.include(jobId);
          }
        resumeNodes();
        await eventually(
          async () => (await registry().getJob(jobId)).status,
          (status) => status !== JobStatus.open,
          60_000,
        );
        const votes = await votesOn(jobId);
        expect(votes.filter((id) => id === licenseId)).to.have.lengthOf(1);
        expect(new Set(votes.map(String)).size).to.equal(votes.length);
      } finally {
        resumeNodes();
      }
    });

    it("refuses to work for a license whose owner OWNERS_ALLOWLIST does not name, and says why", async function () {
      const { l2 } = context();
      expect(await container!.stop()).to.equal(0);
      const outsider = devAccount(OUTSIDER).address;
      // Pending, not latest: a heartbeat the stopped container sent just before its stop may be mined after
      // this read (it was, once), and the refused container must add nothing to what it left.
      const nonce = await l2.getTransactionCount(burner, "pending");
      container = runImage(outsider);
      await logged("the refusal", (lines) =>
        lines.some((line) => line.msg === "waiting for delegation" && line.instructions!.includes(outsider) && line.burner === burner),
      );
      const refusal = parsed(container.lines()).find((line) => line.msg === "waiting for delegation")!;
      console.log(`      (${refusal.instructions})`);
      // The next delegation check is over: each check ends with its own line, the refusing one's after the
      // refusal. One that found the license would have said so ("voting for licenses") before its line.
      const checksAfterRefusal = (lines: LogLine[]) =>
        lines.slice(lines.findIndex((line) => line.msg === "waiting for delegation")).filter((line) => line.msg === "delegation checked");
      await logged("a delegation check after the refusal", (lines) => checksAfterRefusal(lines).length >= 2);
      const checks = checksAfterRefusal(parsed(container.lines()));
      expect(
        checks.filter((line) => line.delegated !== 0),
        "checks that found a license",
      ).to.deep.equal([]);
      const acting = ["voting for licenses", "first heartbeat sent; waiting for it to be mined", "answering jobs"];
      expect(parsed(container.lines()).filter((line) => acting.includes(line.msg!))).to.deep.equal([]);
      expect(await l2.getTransactionCount(burner, "pending")).to.equal(nonce);
      // Nothing it logged carries its key.
      const { privateKey } = JSON.parse(await readFile(path.join(cacheDir, BURNER_FILE), "utf8")) as { privateKey: string };
      expect(container.lines().join("\n").toLowerCase()).to.not.include(privateKey.slice(2).toLowerCase());
    });
  });
}
