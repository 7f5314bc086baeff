import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import { Contract, id, Interface, toQuantity, ZeroAddress, type JsonRpcProvider } from "ethers";

import type { DevAccount } from "../../common/stack-file.ts";
import { waitFor } from "../../common/wait-for.ts";
import { governedContracts } from "../../deploy/two-chain.ts";
import { roleHolders } from "../../governance/roles.ts";
import { opArtifact } from "../../op/artifacts.ts";
import { L2_PREDEPLOYS } from "../../op/predeploys.ts";
import { devAccount } from "../accounts.ts";
import { startOpDevnet, type OpDevnet } from "../op-devnet.ts";
import { fillLiveParameters, parameterDifferences, type RehearsalAddresses } from "./live-parameters.ts";
import { runOperatorCommand, succeeded, type CommandResult } from "./operator-command.ts";
import { copyProject } from "./project-copy.ts";

/** The live networks as hardhat.config.ts names them. */
export interface LiveNetworks {
  l1: { network: string; chainId: number };
  l2: { network: string; chainId: number };
  /** Seconds per L1 block on the live L1 (12 on Sepolia): what the voting delay and period in blocks last. */
  l1BlockSeconds: number;
}

/** Which anvil development account plays which part of the live configuration (none is the devnet's own 0 or 9). */
export const REHEARSAL_ACCOUNTS = { deployer: 3, holder: 1, guardian: 2, treasury: 4 } as const;

export interface RehearsalOptions {
  projectRoot: string;
  live: LiveNetworks;
  /** Keep the temporary project copy (its records and logs) for inspection. */
  keepCopy?: boolean;
  onProgress?: (line: string) => void;
}

export interface DeployRun {
  script: string;
  chainId: number;
  /** Transactions the killed run had mined when it was killed; 0 if it ended before the first. */
  interruptedAfterTransactions: number;
  interrupted: boolean;
  resumedExitCode: number | null;
  /** A transaction the killed run sent but never recorded, added with `hardhat ignition track-tx` before resuming. */
  trackedTransaction: string | undefined;
  /** Ignition's futures that sent a transaction in more than one nonce (a redeployment): none expected. */
  futuresSentTwice: string[];
  /** The contract created by the killed run's first transaction is the one recorded after the resume. */
  firstContractKept: boolean;
  /** The deployer's transactions on the chain, Ignition's (its journal) and the script's own. */
  deployerTransactions: number;
  journalTransactions: number;
  gasUsed: bigint;
  addresses: Record<string, string>;
  durationMs: number;
}

export interface GovernanceStep {
  step: string;
  /** What it would take on the live networks, in seconds (0: at once). */
  liveSeconds: number;
  note: string;
}

export interface RehearsalReport {
  chainIds: { l1: number; l2: number };
  filledParameters: Record<string, string>;
  deployments: { l1: DeployRun; l2: DeployRun };
  governance: {
    proposalId: string;
    steps: GovernanceStep[];
    executedOnL1: boolean;
    executedOnL2: boolean;
    status: string;
    roles: string;
  };
  /** On-chain settings against the live parameter files: each mismatch. */
  settingMismatches: string[];
  /** Roles (and the guardian) held otherwise than docs/governance.md says. */
  unexpectedRoles: string[];
  /** Differences between the live path and the devnet path (`npm start`). */
  differences: string[];
  durationMs: number;
}

const GOVERNOR_ABI = [
  "function votingDelay() view returns (uint256)",
  "function votingPeriod() view returns (uint256)",
  "function proposalThreshold() view returns (uint256)",
  "function quorumNumerator() view returns (uint256)",
  "function proposalGuardian() view returns (address)",
  "function proposalSnapshot(uint256) view returns (uint256)",
  "function proposalDeadline(uint256) view returns (uint256)",
  "function proposalEta(uint256) view returns (uint256)",
  "function state(uint256) view returns (uint8)",
];
const MINE_CHUNK = 2_000n;
const L1_BLOCK = new Interface(opArtifact("L1Block").abi);
const EXECUTED = 7n; // IGovernor.ProposalState.Executed
const ROLE_EVENTS = new Interface([
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
]);

/**
 * The dress rehearsal of the live deployment: an OP devnet with the live chain ids, a temporary copy of
 * the project with the live parameter files (placeholders filled in), and in it the operator's own
 * commands: `npm run deploy:l1Testnet` (killed after its first transaction and run again), the same for
 * `deploy:l2Testnet`, then governance's first proposal through `npm run gov -- --network testnet` with the
 * live voting delay, period and timelock delay, the chains' clocks moved on between the steps. Ends with a
 * check of every role on both chains against docs/governance.md. Nothing of the repository is written.
 */
export async function rehearseLiveDeployment(options: RehearsalOptions): Promise<RehearsalReport> {
  const started = Date.now();
  const progress = options.onProgress ?? (() => undefined);
  const { live, projectRoot } = options;
  const accounts = Object.fromEntries(Object.entries(REHEARSAL_ACCOUNTS).map(([role, index]) => [role, devAccount(index)])) as Record<
    keyof typeof REHEARSAL_ACCOUNTS,
    DevAccount
  >;
  const copy = await copyProject(projectRoot);
  progress(`Project copied to ${copy.root}`);
  let devnet: OpDevnet | undefined;
  const serviceErrors: string[] = [];
  try {
    devnet = await startOpDevnet({
      stateDir: path.join(copy.root, ".devnet"),
      l1ChainId: live.l1.chainId,
      l2ChainId: live.l2.chainId,
      // Ignition waits for 5 confirmations on a live network: 1 s blocks keep that short.
      l1BlockTime: 1,
      l2BlockTime: 1,
      // The vote's 57,600 L1 blocks: anvil mines some 30 a second while it writes past states to disk,
      // several times that with recent states in memory only (nothing here reads an older L1 state).
      l1PruneHistory: 1_000,
      onProgress: progress,
      onServiceError: (service, error) => serviceErrors.push(`${service}: ${String(error)}`),
    });
    const { l1Provider, l2Provider } = devnet;

    // 1. Configuration variables, as hardhat.config.ts reads them.
    const env = {
      L1_TESTNET_RPC_URL: devnet.l1.rpcUrl,
      L2_TESTNET_RPC_URL: devnet.l2.rpcUrl,
      L1_TESTNET_DEPLOYER_KEY: accounts.deployer.privateKey,
      L2_TESTNET_DEPLOYER_KEY: accounts.deployer.privateKey,
    };
    // 2. The live parameter files with their placeholders filled in, and the OP chain's L1 contracts.
    const rehearsalAddresses: RehearsalAddresses = {
      L1: { supplyRecipient: accounts.holder.address, proposalGuardian: accounts.guardian.address },
      L2: { rewardsFunder: accounts.treasury.address, treasury: accounts.treasury.address, forfeitRecipient: accounts.treasury.address },
    };
    const filledParameters: Record<string, string> = {};
    for (const network of [live.l1.network, live.l2.network]) {
      Object.assign(filledParameters, (await fillLiveParameters(projectRoot, copy.root, network, rehearsalAddresses)).filled);
    }
    await writeOpChainFile(copy.root, live, devnet);

    // 3 and 4. The deploy scripts, each killed after its first transaction and run again.
    progress(`npm run deploy:${live.l1.network}, killed after its first transaction, then run again…`);
    const l1Run = await interruptedDeploy(
      copy.root,
      `deploy:${live.l1.network}`,
      env,
      l1Provider,
      accounts.deployer.address,
      live.l1.chainId,
    );
    progress(`npm run deploy:${live.l2.network}, killed after its first transaction, then run again…`);
    const l2Run = await interruptedDeploy(
      copy.root,
      `deploy:${live.l2.network}`,
      env,
      l2Provider,
      accounts.deployer.address,
      live.l2.chainId,
    );
    const l1 = l1Run.addresses;
    const l2 = l2Run.addresses;

    const liveParameters = async (network: string) =>
      JSON.parse(await readFile(path.join(projectRoot, "deploy", "parameters", `${network}.json`), "utf8")) as Record<
        string,
        Record<string, unknown>
      >;
    const settingMismatches = await checkSettings(l1Provider, l2Provider, l1, l2, {
      ...(await liveParameters(live.l1.network)),
      ...(await liveParameters(live.l2.network)),
    });

    // 3. Governance's first proposal, through the operator's CLI.
    progress("Governance's first proposal (accept-admin) through npm run gov -- --network testnet…");
    const governance = await firstProposal(copy.root, { ...env, GOV_PRIVATE_KEY: accounts.holder.privateKey }, devnet, l1, l2, live);
    progress(`Proposal ${governance.proposalId} executed on L2: ${String(governance.executedOnL2)}`);

    // 5. Every role on both chains.
    const unexpectedRoles = await checkRoles(l1Provider, l2Provider, l1, l2, {
      deployer: accounts.deployer.address,
      guardian: accounts.guardian.address,
      rewardsFunder: accounts.treasury.address,
    });

    const differences = [
      ...(await parameterDifferences(projectRoot, live.l1.network, "devnetL1")),
      ...(await parameterDifferences(projectRoot, live.l2.network, "devnetL2")),
      ...governance.differences,
      ...serviceErrors.map((error) => `devnet service error during the rehearsal: ${error}`),
    ];
    return {
      chainIds: { l1: Number((await l1Provider.getNetwork()).chainId), l2: Number((await l2Provider.getNetwork()).chainId) },
      filledParameters,
      deployments: { l1: l1Run, l2: l2Run },
      governance: { ...governance, differences: undefined } as RehearsalReport["governance"],
      settingMismatches,
      unexpectedRoles,
      differences,
      durationMs: Date.now() - started,
    };
  } finally {
    await devnet?.stop();
    if (options.keepCopy === true) progress(`Kept ${copy.root}`);
    else await copy.remove();
  }
}

/** deploy/op-chains/<l2 network>.json of the copy, in the form of the committed example, from the devnet's OP contracts. */
async function writeOpChainFile(root: string, live: LiveNetworks, devnet: OpDevnet): Promise<void> {
  const example = JSON.parse(await readFile(path.join(root, "deploy", "op-chains", "example.json"), "utf8")) as {
    l1ChainId: number;
    l2ChainId: number;
    contracts: Record<string, string>;
  };
  if (example.l1ChainId !== live.l1.chainId || example.l2ChainId !== live.l2.chainId)
    throw new Error(
      `deploy/op-chains/example.json names chains ${example.l1ChainId}/${example.l2ChainId}, hardhat.config.ts ${live.l1.chainId}/${live.l2.chainId}`,
    );
  const opContracts = devnet.l1Contracts as unknown as Record<string, string>;
  const contracts = Object.fromEntries(
    Object.keys(example.contracts).map((name) => {
      const address = opContracts[name];
      if (address === undefined) throw new Error(`deploy/op-chains/example.json names ${name}, which the devnet does not deploy`);
      return [name, address];
    }),
  );
  await writeFile(
    path.join(root, "deploy", "op-chains", `${live.l2.network}.json`),
    `${JSON.stringify({ description: "The rehearsal devnet's OP contracts", l1ChainId: live.l1.chainId, l2ChainId: live.l2.chainId, contracts }, null, 2)}\n`,
  );
}

interface JournalSend {
  futureId: string;
  networkInteractionId: number;
  nonce: number;
  transaction: { hash: string };
}

async function journalSends(root: string, chainId: number): Promise<JournalSend[]> {
  const journal = await readFile(path.join(root, "deploy", "deployments", `chain-${chainId}`, "journal.jsonl"), "utf8").catch(() => "");
  return journal
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { type: string } & JournalSend)
    .filter((entry) => entry.type === "TRANSACTION_SEND");
}

async function interruptedDeploy(
  root: string,
  script: string,
  env: Record<string, string>,
  provider: JsonRpcProvider,
  deployer: string,
  chainId: number,
): Promise<DeployRun> {
  const startBlock = await provider.getBlockNumber();
  const nonceBefore = await provider.getTransactionCount(deployer, "latest");
  // Killed once its first transaction is mined and recorded in Ignition's journal: the interruption that
  // Ignition promises to resume from by itself.
  const killed = await runOperatorCommand(root, ["run", script], env, {
    interruptWhen: async () => {
      const first = (await journalSends(root, chainId)).find((send) => send.nonce === nonceBefore);
      return first !== undefined && (await provider.getTransactionReceipt(first.transaction.hash)) !== null;
    },
  });
  const minedWhenKilled = (await provider.getTransactionCount(deployer, "latest")) - nonceBefore;
  const firstSend = (await journalSends(root, chainId)).find((send) => send.nonce === nonceBefore);
  const firstContract =
    firstSend === undefined
      ? undefined
      : ((await provider.getTransactionReceipt(firstSend.transaction.hash))?.contractAddress ?? undefined);
  let resumed = await runOperatorCommand(root, ["run", script], env);
  // Killed after the node took a transaction but before Ignition recorded it, the resume stops with
  // HHE10410 and names the nonce; the operator's recovery is `hardhat ignition track-tx`, then a resume.
  const untracked = /transaction with nonce (\d+) sent from account (0x[0-9a-fA-F]{40})/.exec(resumed.output);
  let trackedTransaction: string | undefined;
  if (resumed.exitCode !== 0 && untracked !== null) {
    trackedTransaction = await transactionWithNonce(provider, untracked[2], Number(untracked[1]), startBlock + 1);
    succeeded(
      await runOperatorCommand(
        root,
        ["exec", "--", "hardhat", "ignition", "track-tx", trackedTransaction, `chain-${chainId}`, "--network", networkOf(script)],
        env,
      ),
    );
    resumed = await runOperatorCommand(root, ["run", script], env);
  }
  succeeded(resumed);
  await writeFile(path.join(root, `${script.replace(":", "-")}.log`), `${killed.output}\n--- resumed ---\n${resumed.output}`);
  const endBlock = await provider.getBlockNumber();
  const addresses = JSON.parse(
    await readFile(path.join(root, "deploy", "deployments", `chain-${chainId}`, "deployed_addresses.json"), "utf8"),
  ) as Record<string, string>;
  const sends = await journalSends(root, chainId);
  const noncesByInteraction = new Map<string, Set<number>>();
  for (const send of sends) {
    const key = `${send.futureId}/${send.networkInteractionId}`;
    noncesByInteraction.set(key, (noncesByInteraction.get(key) ?? new Set()).add(send.nonce));
  }
  return {
    script,
    chainId,
    interruptedAfterTransactions: minedWhenKilled,
    trackedTransaction,
    interrupted: killed.interrupted,
    resumedExitCode: resumed.exitCode,
    futuresSentTwice: [...noncesByInteraction].filter(([, nonces]) => nonces.size > 1).map(([key]) => key),
    firstContractKept: firstContract === undefined || Object.values(addresses).some((a) => a.toLowerCase() === firstContract.toLowerCase()),
    deployerTransactions: (await provider.getTransactionCount(deployer, "latest")) - nonceBefore,
    journalTransactions: new Set(sends.map((send) => send.nonce)).size,
    gasUsed: await gasUsedBy(provider, deployer, startBlock + 1, endBlock),
    addresses,
    durationMs: killed.durationMs + resumed.durationMs,
  };
}

const networkOf = (script: string) => script.replace(/^deploy:/, "");

/** The hash of `sender`'s transaction with `nonce`, looked up block by block (what an operator does on an explorer). */
async function transactionWithNonce(provider: JsonRpcProvider, sender: string, nonce: number, fromBlock: number): Promise<string> {
  const head = await provider.getBlockNumber();
  for (let number = fromBlock; number <= head; number += 1) {
    const block = await provider.getBlock(number, true);
    const found = block?.prefetchedTransactions.find((tx) => tx.from.toLowerCase() === sender.toLowerCase() && tx.nonce === nonce);
    if (found !== undefined) return found.hash;
  }
  throw new Error(`no transaction with nonce ${nonce} from ${sender} since block ${fromBlock}`);
}

async function gasUsedBy(provider: JsonRpcProvider, sender: string, fromBlock: number, toBlock: number): Promise<bigint> {
  let total = 0n;
  for (let number = fromBlock; number <= toBlock; number += 1) {
    const block = await provider.getBlock(number, true);
    for (const transaction of block?.prefetchedTransactions ?? []) {
      if (transaction.from.toLowerCase() !== sender.toLowerCase()) continue;
      total += (await provider.getTransactionReceipt(transaction.hash))?.gasUsed ?? 0n;
    }
  }
  return total;
}

const gov = (root: string, env: Record<string, string>, ...args: string[]) =>
  runOperatorCommand(root, ["run", "gov", "--", "--network", "testnet", ...args], env);

async function firstProposal(
  root: string,
  env: Record<string, string>,
  devnet: OpDevnet,
  l1: Record<string, string>,
  l2: Record<string, string>,
  live: LiveNetworks,
): Promise<RehearsalReport["governance"] & { differences: string[] }> {
  const { l1Provider, l2Provider } = devnet;
  const differences: string[] = [];
  const governor = new Contract(l1["L1#ProtocolGovernor"], GOVERNOR_ABI, l1Provider);
  const timelock = new Contract(l1["L1#ProtocolTimelock"], ["function getMinDelay() view returns (uint256)"], l1Provider);
  const [votingDelay, votingPeriod, timelockDelay] = (await Promise.all([
    governor.getFunction("votingDelay")(),
    governor.getFunction("votingPeriod")(),
    timelock.getFunction("getMinDelay")(),
  ])) as bigint[];
  const steps: GovernanceStep[] = [];
  // anvil mines some hundred blocks a second (fewer on two busy cores): the vote's 57,600 blocks go in
  // chunks, each well within a request's timeout, at the live L1's block time.
  const mineL1 = async (blocks: bigint) => {
    for (let left = blocks; left > 0n; left -= MINE_CHUNK) {
      await l1Provider.send("anvil_mine", [toQuantity(left < MINE_CHUNK ? left : MINE_CHUNK), toQuantity(live.l1BlockSeconds)]);
    }
  };

  succeeded(await gov(root, env, "delegate"));
  steps.push({ step: "delegate", liveSeconds: live.l1BlockSeconds, note: "counts from the next L1 block" });
  await mineL1(1n);

  let proposed = await gov(root, env, "propose", "accept-admin", "--note", "Hand the L2 protocol to governance");
  if (proposed.exitCode !== 0) {
    differences.push(
      `\`npm run gov -- --network testnet propose accept-admin\`, as deploy:l2Testnet prints it, was refused: ${lastLine(proposed)}; proposed with --skip-l2-check`,
    );
    proposed = succeeded(
      await gov(root, env, "propose", "accept-admin", "--skip-l2-check", "--note", "Hand the L2 protocol to governance"),
    );
  }
  const proposalId = /Proposal (\d+) made/.exec(proposed.output)?.[1];
  if (proposalId === undefined) throw new Error(`no proposal id in:\n${proposed.output}`);
  const snapshot = (await governor.getFunction("proposalSnapshot")(proposalId)) as bigint;
  steps.push({ step: "propose", liveSeconds: live.l1BlockSeconds, note: `snapshot at L1 block ${snapshot}` });

  // The devnet's stand-in for op-node would set each of the mined blocks in L2's L1Block, one call each
  // (minutes of work for nothing the proposal needs): it pauses, and L1Block jumps to the L1 head before
  // the execution's deposit (`skipL1Attributes`). The deposit relay still drives it for the blocks after.
  await devnet.l1Attributes.stop();
  await mineL1(snapshot - BigInt(await l1Provider.getBlockNumber()) + 1n);
  steps.push({
    step: "voting delay",
    liveSeconds: Number(votingDelay) * live.l1BlockSeconds,
    note: `${votingDelay} blocks, mined with anvil_mine`,
  });
  succeeded(await gov(root, env, "vote", proposalId, "for"));
  steps.push({ step: "vote", liveSeconds: live.l1BlockSeconds, note: "the holder of the supply, for" });

  const deadline = (await governor.getFunction("proposalDeadline")(proposalId)) as bigint;
  await mineL1(deadline - BigInt(await l1Provider.getBlockNumber()) + 1n);
  steps.push({
    step: "voting period",
    liveSeconds: Number(votingPeriod) * live.l1BlockSeconds,
    note: `${votingPeriod} blocks, mined with anvil_mine`,
  });
  succeeded(await gov(root, env, "queue", proposalId));
  steps.push({ step: "queue", liveSeconds: live.l1BlockSeconds, note: "" });

  const eta = (await governor.getFunction("proposalEta")(proposalId)) as bigint;
  await l1Provider.send("anvil_setNextBlockTimestamp", [Number(eta) + 1]);
  await l1Provider.send("evm_mine", []);
  steps.push({ step: "timelock delay", liveSeconds: Number(timelockDelay), note: "anvil_setNextBlockTimestamp past the eta" });

  // On the live L2 the ten days of the vote pass too: the admin handover's delay is over by then.
  const handoverDue = await adminHandoverDue(l2Provider, l2);
  const l2Now = (await l2Provider.getBlock("latest"))!.timestamp;
  if (handoverDue > BigInt(l2Now)) {
    await l2Provider.send("evm_increaseTime", [Number(handoverDue) - l2Now + 1]);
    await l2Provider.send("evm_mine", []);
  }

  await skipL1Attributes(devnet);
  succeeded(await gov(root, env, "execute", proposalId));
  const executedOnL1 = ((await governor.getFunction("state")(proposalId)) as bigint) === EXECUTED;
  steps.push({ step: "execute on L1", liveSeconds: live.l1BlockSeconds, note: "" });

  const relayStarted = Date.now();
  const executor = l2["L2#GovernanceExecutor"];
  const contracts = governedContracts({
    StakedToken: l2["L2#StakedToken"],
    NodeLicense: l2["L2#NodeLicense"],
    NodeRegistry: l2["L2#NodeRegistry"],
    VerificationRegistry: l2["L2#VerificationRegistry"],
  });
  const adminsAreExecutor = async () => {
    const admins = await Promise.all(
      contracts.map(
        (address) =>
          new Contract(address, ["function defaultAdmin() view returns (address)"], l2Provider).getFunction(
            "defaultAdmin",
          )() as Promise<string>,
      ),
    );
    return admins.every((admin) => admin.toLowerCase() === executor.toLowerCase());
  };
  let executedOnL2 = true;
  await waitFor("the first proposal to take effect on L2", adminsAreExecutor, 10 * 60_000).catch(() => (executedOnL2 = false));
  steps.push({
    step: "relay to L2",
    liveSeconds: 180,
    note: `a deposit: a few minutes live; ${Math.round((Date.now() - relayStarted) / 1000)} s here`,
  });
  const status = await gov(root, env, "status", proposalId);
  const roles = await gov(root, env, "roles");
  return { proposalId, steps, executedOnL1, executedOnL2, status: status.output, roles: roles.output, differences };
}

/** Sets the L1 head's values in L2's L1Block at once, as the depositor, and waits until it is mined. */
async function skipL1Attributes(devnet: OpDevnet): Promise<void> {
  const { l1Provider, l2Provider } = devnet;
  const values = await devnet.l1Attributes.valuesOf(await l1Provider.getBlockNumber());
  const depositor = L1_BLOCK.decodeFunctionResult(
    "DEPOSITOR_ACCOUNT",
    await l2Provider.call({ to: L2_PREDEPLOYS.L1Block, data: L1_BLOCK.encodeFunctionData("DEPOSITOR_ACCOUNT") }),
  )[0] as string;
  await l2Provider.send("anvil_impersonateAccount", [depositor]);
  const hash = (await l2Provider.send("eth_sendTransaction", [
    {
      from: depositor,
      to: L2_PREDEPLOYS.L1Block,
      data: L1_BLOCK.encodeFunctionData("setL1BlockValues", [
        values.number,
        values.timestamp,
        values.basefee,
        values.hash,
        values.sequenceNumber,
        values.batcherHash,
        values.l1FeeOverhead,
        values.l1FeeScalar,
      ]),
      gas: toQuantity(1_000_000n),
    },
  ])) as string;
  await l2Provider.waitForTransaction(hash, 1, 120_000);
}

function lastLine(result: CommandResult): string {
  return (
    result.output
      .trim()
      .split("\n")
      .filter((line) => line.startsWith("error"))
      .at(-1) ??
    result.output.trim().split("\n").at(-1) ??
    ""
  );
}

async function adminHandoverDue(l2Provider: JsonRpcProvider, l2: Record<string, string>): Promise<bigint> {
  let due = 0n;
  for (const name of ["StakedToken", "NodeLicense", "NodeRegistry", "VerificationRegistry"]) {
    const contract = new Contract(l2[`L2#${name}`], ["function pendingDefaultAdmin() view returns (address, uint48)"], l2Provider);
    const [, schedule] = (await contract.getFunction("pendingDefaultAdmin")()) as [string, bigint];
    if (schedule > due) due = schedule;
  }
  return due;
}

/** The deployed contracts' settings against the live parameter files. */
async function checkSettings(
  l1Provider: JsonRpcProvider,
  l2Provider: JsonRpcProvider,
  l1: Record<string, string>,
  l2: Record<string, string>,
  parameters: Record<string, Record<string, unknown>>,
): Promise<string[]> {
  const mismatches: string[] = [];
  const expectValue = async (where: string, contract: Contract, getter: string, moduleId: string, name: string) => {
    const written = parameters[moduleId]?.[name];
    if (written === undefined) return;
    const expected = BigInt(typeof written === "string" ? written.replace(/n$/, "") : (written as number));
    const actual = (await contract.getFunction(getter)()) as bigint;
    if (actual !== expected) mismatches.push(`${where}.${getter}() is ${actual}, ${moduleId}.${name} says ${expected}`);
  };
  const governor = new Contract(l1["L1#ProtocolGovernor"], GOVERNOR_ABI, l1Provider);
  await expectValue("Governor", governor, "votingDelay", "L1", "votingDelay");
  await expectValue("Governor", governor, "votingPeriod", "L1", "votingPeriod");
  await expectValue("Governor", governor, "proposalThreshold", "L1", "proposalThreshold");
  await expectValue("Governor", governor, "quorumNumerator", "L1", "quorumPercent");
  const timelock = new Contract(l1["L1#ProtocolTimelock"], ["function getMinDelay() view returns (uint256)"], l1Provider);
  await expectValue("Timelock", timelock, "getMinDelay", "L1", "timelockDelay");
  const nodeRegistry = new Contract(
    l2["L2#NodeRegistry"],
    ["function quorum() view returns (uint256)", "function livenessWindow() view returns (uint256)"],
    l2Provider,
  );
  await expectValue("NodeRegistry", nodeRegistry, "quorum", "L2", "quorum");
  await expectValue("NodeRegistry", nodeRegistry, "livenessWindow", "L2", "livenessWindow");
  const registry = new Contract(
    l2["L2#VerificationRegistry"],
    ["function requestFee() view returns (uint256)", "function jobTimeout() view returns (uint256)"],
    l2Provider,
  );
  await expectValue("VerificationRegistry", registry, "requestFee", "L2", "requestFee");
  await expectValue("VerificationRegistry", registry, "jobTimeout", "L2", "jobTimeout");
  for (const name of ["StakedToken", "NodeLicense", "NodeRegistry", "VerificationRegistry"]) {
    const contract = new Contract(l2[`L2#${name}`], ["function defaultAdminDelay() view returns (uint48)"], l2Provider);
    await expectValue(name, contract, "defaultAdminDelay", "L2", "adminTransferDelay");
  }
  return mismatches;
}

/**
 * Every role on both chains against docs/governance.md's table: on L2 the executor administers the four
 * governed contracts (no handover pending), the verification registry holds PROTOCOL_ROLE and
 * RECORDER_ROLE, the attestation verifier ATTESTATION_ROLE, the `rewardsFunder` parameter
 * REWARDS_FUNDER_ROLE, and no one else anything; on L1 the timelock administers itself, the governor is
 * its only proposer and canceller, anyone executes, and the guardian is the `proposalGuardian` parameter.
 * The deployer holds nothing.
 */
async function checkRoles(
  l1Provider: JsonRpcProvider,
  l2Provider: JsonRpcProvider,
  l1: Record<string, string>,
  l2: Record<string, string>,
  accounts: { deployer: string; guardian: string; rewardsFunder: string },
): Promise<string[]> {
  const unexpected: string[] = [];
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const executor = l2["L2#GovernanceExecutor"];
  const expectedHolder: Record<string, string> = {
    DEFAULT_ADMIN_ROLE: executor,
    PROTOCOL_ROLE: l2["L2#VerificationRegistry"],
    RECORDER_ROLE: l2["L2#VerificationRegistry"],
    ATTESTATION_ROLE: l2["L2#AttestationVerifier"],
    REWARDS_FUNDER_ROLE: accounts.rewardsFunder,
  };
  const governed = {
    StakedToken: l2["L2#StakedToken"],
    NodeLicense: l2["L2#NodeLicense"],
    NodeRegistry: l2["L2#NodeRegistry"],
    VerificationRegistry: l2["L2#VerificationRegistry"],
  } as Parameters<typeof roleHolders>[1];
  for (const contract of await roleHolders(l2Provider, governed)) {
    if (!same(contract.defaultAdmin, executor))
      unexpected.push(`L2 ${contract.contract}: admin ${contract.defaultAdmin}, not the executor`);
    if (contract.pendingAdmin !== undefined)
      unexpected.push(`L2 ${contract.contract}: admin handover still pending to ${contract.pendingAdmin}`);
    for (const [role, holders] of Object.entries(contract.roles)) {
      for (const holder of holders) {
        const expected = expectedHolder[role];
        if (expected === undefined || !same(holder, expected))
          unexpected.push(`L2 ${contract.contract}: ${role} held by ${holder}${same(holder, accounts.deployer) ? " (the deployer)" : ""}`);
      }
    }
  }
  // L1: the timelock's roles, replayed from its events; the governor's guardian.
  const timelock = l1["L1#ProtocolTimelock"];
  const governor = l1["L1#ProtocolGovernor"];
  const l1Expected: Record<string, string[]> = {
    [`0x${"00".repeat(32)}`]: [timelock],
    [id("PROPOSER_ROLE")]: [governor],
    [id("CANCELLER_ROLE")]: [governor],
    [id("EXECUTOR_ROLE")]: [ZeroAddress],
  };
  const names = new Map(
    ["PROPOSER_ROLE", "CANCELLER_ROLE", "EXECUTOR_ROLE"]
      .map((name) => [id(name), name] as [string, string])
      .concat([[`0x${"00".repeat(32)}`, "DEFAULT_ADMIN_ROLE"]]),
  );
  const logs = await l1Provider.getLogs({
    address: timelock,
    topics: [[ROLE_EVENTS.getEvent("RoleGranted")!.topicHash, ROLE_EVENTS.getEvent("RoleRevoked")!.topicHash]],
    fromBlock: 0,
  });
  const holders = new Map<string, Set<string>>();
  for (const log of logs) {
    const event = ROLE_EVENTS.parseLog(log)!;
    const set = holders.get(event.args.role as string) ?? new Set<string>();
    if (event.name === "RoleGranted") set.add((event.args.account as string).toLowerCase());
    else set.delete((event.args.account as string).toLowerCase());
    holders.set(event.args.role as string, set);
  }
  for (const [role, set] of holders) {
    for (const holder of set) {
      if (!(l1Expected[role] ?? []).some((expected) => same(expected, holder)))
        unexpected.push(
          `L1 Timelock: ${names.get(role) ?? role} held by ${holder}${same(holder, accounts.deployer) ? " (the deployer)" : ""}`,
        );
    }
  }
  for (const [role, expected] of Object.entries(l1Expected)) {
    for (const holder of expected)
      if (!(holders.get(role) ?? new Set()).has(holder.toLowerCase()))
        unexpected.push(`L1 Timelock: ${names.get(role)} missing for ${holder}`);
  }
  const guardian = (await new Contract(governor, GOVERNOR_ABI, l1Provider).getFunction("proposalGuardian")()) as string;
  if (!same(guardian, accounts.guardian)) unexpected.push(`L1 Governor: proposal guardian ${guardian}, not the proposalGuardian parameter`);
  return unexpected;
}

/** Seconds as days, hours or minutes. */
export function humanDuration(seconds: number): string {
  if (seconds >= 86_400) return `${+(seconds / 86_400).toFixed(1)} d`;
  if (seconds >= 3_600) return `${+(seconds / 3_600).toFixed(1)} h`;
  if (seconds >= 60) return `${+(seconds / 60).toFixed(1)} min`;
  return `${seconds} s`;
}

/** The report as printed by `npm run rehearse:testnets`. */
export function formatReport(report: RehearsalReport): string {
  const lines: string[] = [];
  lines.push(
    `Rehearsal of the live deployment on chains ${report.chainIds.l1} (L1) and ${report.chainIds.l2} (L2), ${Math.round(report.durationMs / 1000)} s`,
  );
  lines.push("", "Placeholders filled in the copied parameter files:");
  for (const [name, address] of Object.entries(report.filledParameters)) lines.push(`  ${name.padEnd(22)}${address}`);
  for (const run of [report.deployments.l1, report.deployments.l2]) {
    lines.push(
      "",
      `npm run ${run.script} (chain ${run.chainId}), ${Math.round(run.durationMs / 1000)} s, ${run.gasUsed.toLocaleString("en-US")} gas:`,
    );
    lines.push(
      `  interrupted: ${run.interrupted ? `killed after ${run.interruptedAfterTransactions} mined transaction(s)` : "NOT interrupted (ended first)"}; ` +
        `resumed: exit ${String(run.resumedExitCode)}; futures sent twice: ${run.futuresSentTwice.length === 0 ? "none" : run.futuresSentTwice.join(", ")}; ` +
        `first contract kept: ${run.firstContractKept ? "yes" : "NO"}`,
    );
    if (run.trackedTransaction !== undefined)
      lines.push(
        `  the killed run's transaction ${run.trackedTransaction} was unknown to Ignition: added with \`hardhat ignition track-tx\` before resuming`,
      );
    lines.push(`  deployer transactions: ${run.deployerTransactions} (${run.journalTransactions} in Ignition's journal)`);
    for (const [future, address] of Object.entries(run.addresses)) lines.push(`  ${future.padEnd(33)}${address}`);
  }
  lines.push(
    "",
    `Governance: proposal ${report.governance.proposalId}, executed on L1: ${report.governance.executedOnL1 ? "yes" : "NO"}, on L2: ${report.governance.executedOnL2 ? "yes" : "NO"}`,
  );
  let total = 0;
  for (const step of report.governance.steps) {
    total += step.liveSeconds;
    lines.push(`  ${step.step.padEnd(16)}${humanDuration(step.liveSeconds).padStart(8)} live${step.note === "" ? "" : `  (${step.note})`}`);
  }
  lines.push(`  ${"total".padEnd(16)}${humanDuration(total).padStart(8)} live`);
  lines.push(
    "",
    "Settings on chain against the live parameter files:",
    ...(report.settingMismatches.length === 0 ? ["  all as written"] : report.settingMismatches.map((m) => `  ${m}`)),
  );
  lines.push(
    "",
    "Roles against docs/governance.md:",
    ...(report.unexpectedRoles.length === 0 ? ["  as documented; the deployer holds none"] : report.unexpectedRoles.map((r) => `  ${r}`)),
  );
  lines.push(
    "",
    "Live path against the devnet path:",
    ...(report.differences.length === 0 ? ["  no difference"] : report.differences.map((d) => `  - ${d}`)),
  );
  return lines.join("\n");
}

/** A place for the rehearsal's report beside the run, for CI or a reviewer. */
export async function writeReport(file: string, report: RehearsalReport): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value), 2)}\n`);
}
