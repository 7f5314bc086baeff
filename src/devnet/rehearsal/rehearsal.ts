import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

import type { DevAccount } from "../../common/stack-file.ts";
import { devAccount } from "../accounts.ts";
import { startOpDevnet, type OpDevnet } from "../op-devnet.ts";
import { interruptedDeploy } from "./deploy-run.ts";
import { firstProposal } from "./governance-run.ts";
import { fillLiveParameters, parameterDifferences, type LiveNetworks, type RehearsalAddresses } from "./live-parameters.ts";
import { checkRoles, checkSettings } from "./on-chain-checks.ts";
import { copyProject, existingProjectCopy } from "./project-copy.ts";
import type { RehearsalReport } from "./report.ts";

export type { LiveNetworks } from "./live-parameters.ts";
export { formatReport, writeReport, type RehearsalReport } from "./report.ts";

/** Which anvil development account plays which part of the live configuration (none is the devnet's own 0 or 9). */
export const REHEARSAL_ACCOUNTS = { deployer: 3, holder: 1, guardian: 2, treasury: 4 } as const;

export interface RehearsalOptions {
  projectRoot: string;
  live: LiveNetworks;
  /** Keep the temporary project copy (its records and logs) for inspection. */
  keepCopy?: boolean;
  /** A copy of the project made earlier with `copyProject`, to use (and remove) instead of making one. */
  projectCopy?: string;
  onProgress?: (line: string) => void;
}

/** The rules the rehearsal's L1 runs under (the report says so): the contracts' target, hardhat.config.ts's evmVersion. */
export const L1_REHEARSAL_HARDFORK = "cancun";

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
  const copy = options.projectCopy === undefined ? await copyProject(projectRoot) : existingProjectCopy(options.projectCopy);
  progress(`Project copied to ${copy.root}`);
  let devnet: OpDevnet | undefined;
  const serviceErrors: string[] = [];
  try {
    devnet = await startOpDevnet({
      stateDir: path.join(copy.root, ".devnet"),
      l1ChainId: live.l1.chainId,
      l2ChainId: live.l2.chainId,
      // Ignition waits for 5 confirmations on a live network: short blocks keep that short. But not 2 s or less on
      // L1: once anvil has mined at such an interval, `l1RecentStates` no longer bounds its memory and the vote's
      // blocks come ever slower. Measured with anvil 1.7.1, 30,000 blocks by `anvil_mine` (the interval mining
      // off meanwhile, as below): 38 s and 6.4 GB at a 1 s interval, 34 s at 2 s, 5.7 s and 0.4 GB at 3 s. A fresh
      // clone's CI run spent over 20 minutes in the vote so, starving the test processes beside it.
      l1BlockTime: 3,
      l2BlockTime: 1,
      // The vote's 57,600 L1 blocks: anvil mines them far faster when it keeps only a few recent states and
      // runs Cancun's rules (docs/devnet-and-bridge.md). Ignition reads nonces a few blocks back (its
      // confirmations); nothing reads further. The contracts are compiled for Cancun (hardhat.config.ts), so
      // nothing deployed behaves otherwise on Sepolia, which runs Prague's.
      l1RecentStates: 64,
      l1Hardfork: L1_REHEARSAL_HARDFORK,
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
      l1Hardfork: L1_REHEARSAL_HARDFORK,
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
