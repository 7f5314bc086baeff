import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { Bridge, type BridgeNetwork } from "@avn/bridge";
import { Contract, parseEther } from "ethers";

import { devAccount } from "../devnet/accounts.ts";
import { deployOnDevnet } from "../devnet/local-stack.ts";
import { startOpDevnet } from "../devnet/op-devnet.ts";

export interface TimingSummary {
  measurement: string;
  runs: number;
  medianMs: number;
  p95Ms: number;
}

export function summarize(measurement: string, samples: number[]): TimingSummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { measurement, runs: samples.length, medianMs: at(0.5), p95Ms: at(0.95) };
}

export function formatTimings(rows: TimingSummary[]): string {
  const lines = rows.map((row) => `| ${row.measurement} | ${row.runs} | ${row.medianMs.toFixed(0)} | ${row.p95Ms.toFixed(0)} |`);
  return ["| measurement | runs | median ms | p95 ms |", "|---|---:|---:|---:|", ...lines].join("\n");
}

async function until(read: () => Promise<boolean>): Promise<void> {
  while (!(await read())) await new Promise((resolve) => setTimeout(resolve, 25));
}

/**
 * Times the bridge on a fresh devnet (L2 blocks every 2 s, relay and proposer polling every 250 ms):
 * an ETH deposit from the moment it is sent on L1 to the moment the balance shows on L2, and a full
 * withdrawal cycle (withdraw on L2, wait for an output, prove, finalize) with L1 time advanced past the
 * finalization period instead of waited for.
 */
export async function measureBridgeTimings(options: { deposits: number; withdrawals: number }): Promise<TimingSummary[]> {
  const stateDir = await mkdtemp(path.join(tmpdir(), "bench-bridge-"));
  const finalizationPeriodSeconds = 3_600n;
  const devnet = await startOpDevnet({ stateDir, finalizationPeriodSeconds });
  const suffix = path.basename(stateDir);
  const ids = { l1: `bench-l1-${suffix}`, l2: `bench-l2-${suffix}` };
  try {
    const deployed = await deployOnDevnet(devnet, ids);
    const network: BridgeNetwork = {
      name: "devnet",
      l1: { chainId: devnet.l1.chainId, rpcUrl: devnet.l1.rpcUrl },
      l2: { chainId: devnet.l2.chainId, rpcUrl: devnet.l2.rpcUrl },
      opContracts: devnet.l1Contracts,
      primaryToken: { l1: deployed.l1PrimaryToken, l2: deployed.l2.PrimaryToken },
      pollIntervalMs: 100,
    };
    const user = devAccount(8);
    const bridge = await Bridge.connect(network, user.privateKey);

    const depositMs: number[] = [];
    const l1MinedToL2Ms: number[] = [];
    for (let run = 0; run < options.deposits; run += 1) {
      const before = await devnet.l2Provider.getBalance(user.address);
      // Start at a random point of the L2 block interval, as a user would.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 2_000));
      const sent = performance.now();
      await bridge.depositEth(parseEther("0.01"));
      const mined = performance.now();
      await until(async () => (await devnet.l2Provider.getBalance(user.address)) > before);
      depositMs.push(performance.now() - sent);
      l1MinedToL2Ms.push(performance.now() - mined);
    }

    // Some primary tokens on L2 to withdraw.
    const deployer = await devnet.l1Provider.getSigner(devnet.accounts.deployer.address);
    const l1Token = new Contract(deployed.l1PrimaryToken, ["function transfer(address, uint256) returns (bool)"], deployer);
    await (await l1Token.getFunction("transfer").send(user.address, parseEther("1000"))).wait();
    await bridge.waitFor(await bridge.depositPrimaryToken(parseEther("1000"), { approve: true }), "RELAYED");

    const toProvableMs: number[] = [];
    const cycleMs: number[] = [];
    for (let run = 0; run < options.withdrawals; run += 1) {
      const start = performance.now();
      const hash = await bridge.withdrawPrimaryToken(parseEther("1"));
      await bridge.waitFor(hash, "READY_TO_PROVE");
      toProvableMs.push(performance.now() - start);
      await bridge.prove(hash);
      await devnet.l1Provider.send("evm_increaseTime", [Number(finalizationPeriodSeconds) + 1]);
      await devnet.l1Provider.send("evm_mine", []);
      await bridge.finalize(hash);
      cycleMs.push(performance.now() - start);
    }
    return [
      summarize("ETH deposit: L1 send → L2 balance", depositMs),
      summarize("ETH deposit: L1 mined → L2 balance", l1MinedToL2Ms),
      summarize("withdrawal: L2 send → READY_TO_PROVE", toProvableMs),
      summarize("withdrawal: full cycle (withdraw, prove, finalize; L1 time advanced)", cycleMs),
    ];
  } finally {
    await devnet.stop();
    await rm(stateDir, { recursive: true, force: true });
    const deployments = path.resolve(import.meta.dirname, "..", "..", "deploy", "deployments");
    for (const id of Object.values(ids)) await rm(path.join(deployments, id), { recursive: true, force: true });
  }
}
