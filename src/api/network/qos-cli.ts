import { parseArgs } from "node:util";

import { formatUnits } from "ethers";

import type { LicenseQos } from "@avn/protocol/qos";
import { epochPayouts } from "@avn/protocol/rewards";

import type { JsonRpc } from "../../chains/evm/balance-slot.ts";
import { EpochSettlements } from "../../chains/evm/epoch-settlement.ts";
import { JsonRpcPool } from "../../chains/rpc/json-rpc-pool.ts";
import { describeError } from "../../common/describe-error.ts";
import { NetworkService, toNetworkNode, type NetworkNodes } from "./network-service.ts";

const USAGE = `Usage: npm run qos -- [--license <id>] [--epoch <n>] [--json] [--rpc-url <L2 JSON-RPC URL> --registry <VerificationRegistry> [--reward-pools <RewardPools>]]
  Each license's quality of service in the current epoch, as GET /api/network/nodes publishes it, read from the L2.
  --license <id>   one license, with every figure, what its score is made of, and its share of the epoch's rewards
  --epoch <n>      an earlier epoch, counted to its end (default: the current one, so far)
  --json           the figures as JSON (the API's shape)
  Without --rpc-url and --registry, the running local stack's (.devnet/stack.json).`;

export interface QosCliOutput {
  print: (line: string) => void;
  printError: (line: string) => void;
  /** How the L2 is reached at a URL (default: over HTTP, a 10 s timeout per call). */
  connect?: (rpcUrl: string) => JsonRpc;
}

/** Where the figures are read: the L2, its VerificationRegistry and its RewardPools. */
export interface QosCliTarget {
  rpcUrl: string;
  verificationRegistry: string;
  rewardPools?: string;
}

/** `npm run qos -- …`; `defaults` is the local stack's target, when one runs. Returns the exit code. */
export async function runQosCli(args: string[], defaults: QosCliTarget | undefined, output: QosCliOutput): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      options: {
        license: { type: "string" },
        epoch: { type: "string" },
        json: { type: "boolean", default: false },
        "rpc-url": { type: "string" },
        registry: { type: "string" },
        "reward-pools": { type: "string" },
      },
    }));
  } catch (error) {
    output.printError(`${(error as Error).message}\n${USAGE}`);
    return 1;
  }
  if (values.license !== undefined && !/^[1-9]\d{0,15}$/.test(values.license)) {
    output.printError(`not a license id: ${values.license}\n${USAGE}`);
    return 1;
  }
  if (values.epoch !== undefined && !/^\d{1,9}$/.test(values.epoch)) {
    output.printError(`not an epoch: ${values.epoch}\n${USAGE}`);
    return 1;
  }
  const rpcUrl = values["rpc-url"] ?? defaults?.rpcUrl;
  const verificationRegistry = values.registry ?? defaults?.verificationRegistry;
  const rewardPools = values["reward-pools"] ?? (values.registry === undefined ? defaults?.rewardPools : undefined);
  if (rpcUrl === undefined || verificationRegistry === undefined) {
    output.printError(`No local stack runs (.devnet/stack.json): give --rpc-url and --registry.\n${USAGE}`);
    return 1;
  }
  const connect = output.connect ?? ((url: string) => new JsonRpcPool({ urls: [url], timeoutMs: 10_000 }));
  // Every event kept: an earlier epoch is replayed from them.
  const l2 = connect(rpcUrl);
  const network = new NetworkService({ l2, verificationRegistry, keepAllEvents: true });
  let current: NetworkNodes;
  try {
    current = await network.nodes();
  } catch (error) {
    output.printError(`The L2 could not be read: ${describeError(error)}`);
    return 2;
  }
  const epoch = values.epoch === undefined ? current.epoch : Number(values.epoch);
  if (epoch > current.epoch) {
    output.printError(`Epoch ${epoch} has not begun: the current epoch is ${current.epoch}.`);
    return 1;
  }
  const read = await network.pastEpoch(epoch);
  const nodes: NetworkNodes = {
    epoch,
    epochEndsAt: read.epochEndsAt,
    block: read.block,
    nodes: [...read.byLicense.values()].map(toNetworkNode),
  };
  if (values.license === undefined) {
    if (values.json) output.print(JSON.stringify(nodes, null, 2));
    else printTable(nodes, epoch === current.epoch, output.print);
    return 0;
  }
  const figures = read.byLicense.get(BigInt(values.license));
  if (figures === undefined) {
    output.printError(`License ${values.license} was never delegated: it has no figures.`);
    return 1;
  }
  if (values.json) output.print(JSON.stringify(toNetworkNode(figures)));
  else {
    printLicense(figures, nodes, output.print);
    if (rewardPools === undefined) output.print("  rewards        (give --reward-pools to see this license's share)");
    else {
      try {
        output.print(await rewardLine(new EpochSettlements(l2, rewardPools), epoch, read.byLicense, figures.licenseId));
      } catch (error) {
        output.printError(`The reward pools could not be read: ${describeError(error)}`);
        return 2;
      }
    }
  }
  return 0;
}

/**
 * The license's share of the epoch's pool by the published rule (points times score): for the current
 * epoch, were it to end now; for an ended one, what its settlement pays (the tree every node votes), and
 * whether its root is accepted.
 */
async function rewardLine(
  settlements: EpochSettlements,
  epoch: number,
  figures: ReadonlyMap<bigint, LicenseQos>,
  licenseId: bigint,
): Promise<string> {
  const state = await settlements.state(epoch);
  const tokens = (amount: bigint) => `${formatUnits(amount, 18)} of a pool of ${formatUnits(state.pool, 18)} staked tokens`;
  const { epoch: current, timestamp } = await settlements.currentEpoch();
  if (epoch === current || timestamp < state.settlementOpensAt) {
    const { payouts, totalWeight } = epochPayouts(figures.values(), state.pool);
    const own = payouts.find((payout) => payout.licenseId === licenseId);
    const rule = `weight ${own?.weight ?? 0n} of ${totalWeight}: points times score`;
    const when = epoch === current ? "were the epoch to end now" : `settles from ${new Date(state.settlementOpensAt * 1000).toISOString()}`;
    return `  would earn     ${tokens(own?.amount ?? 0n)}, ${when} (${rule})`;
  }
  const { tree } = await settlements.rewards(epoch);
  const own = tree.payouts.find((payout) => payout.licenseId === licenseId);
  const root = state.accepted
    ? state.root.toLowerCase() === tree.root.toLowerCase()
      ? `root accepted, claims open ${new Date(state.claimsOpenAt * 1000).toISOString()}`
      : `the accepted root ${state.root} is not this payout's ${tree.root}`
    : `root ${tree.root} not accepted yet`;
  return `  earned         ${tokens(own?.amount ?? 0n)} (${root})`;
}

const percent = (bps: number) => `${(bps / 100).toFixed(2)}%`;

function printTable(nodes: NetworkNodes, current: boolean, print: (line: string) => void): void {
  const when = new Date(nodes.epochEndsAt * 1000).toISOString();
  print(`Epoch ${nodes.epoch}, ${current ? `ends ${when} (so far)` : `ended ${when}`}; read at L2 block ${nodes.block}.`);
  print("license  live  uptime    particip.  accuracy  delay  score     asked  votes  agreed  disagreed  challenges  operator");
  for (const node of nodes.nodes) {
    print(
      [
        String(node.licenseId).padEnd(7),
        (node.live ? "yes" : "no").padEnd(4),
        percent(node.uptimeBps).padEnd(8),
        percent(node.participationBps).padEnd(9),
        percent(node.accuracyBps).padEnd(8),
        String(node.medianVoteDelayBlocks).padEnd(5),
        percent(node.scoreBps).padEnd(8),
        String(node.jobsAsked).padEnd(5),
        String(node.votes).padEnd(5),
        String(node.agreed).padEnd(6),
        String(node.disagreed).padEnd(9),
        `${node.challengeJobsAnswered}/${node.challengeJobsAsked}`.padEnd(10),
        node.operator ?? "(not delegated)",
      ].join("  "),
    );
  }
}

function printLicense(figures: LicenseQos, nodes: NetworkNodes, print: (line: string) => void): void {
  print(
    `License ${figures.licenseId}, epoch ${nodes.epoch} (ends ${new Date(nodes.epochEndsAt * 1000).toISOString()}), L2 block ${nodes.block}`,
  );
  print(`  operator       ${figures.operator ?? "(not delegated)"}${figures.live ? ", live" : ", not live"}`);
  print(`  uptime         ${percent(figures.uptimeBps)}: ${figures.beatWindows} of ${figures.windows} liveness windows held a heartbeat`);
  print(
    `  participation  ${percent(figures.participationBps)}: ${figures.jobsAnswered} of ${figures.jobsAsked} jobs asked while live were answered`,
  );
  print(`  accuracy       ${percent(figures.accuracyBps)}: ${figures.agreed} votes agreed with the quorum, ${figures.disagreed} did not`);
  print(`  points         ${figures.points} of the ${figures.agreed} agreeing votes were committed before the answer was revealed`);
  print(
    `  timeliness     ${percent(figures.timelinessBps)}: median ${figures.medianVoteDelayBlocks} blocks from request to vote (${figures.votes} votes)`,
  );
  print(
    `  capacity       ${figures.challengeJobsAnswered} of ${figures.challengeJobsAsked} challenge jobs answered, median ${figures.challengeMedianVoteDelayBlocks} blocks from request to vote`,
  );
  print(`  attestations   ${figures.attestations} attested answers recorded on-chain with its signature (published, not paid)`);
  print(`  score          ${percent(figures.scoreBps)}${figures.disagreed >= 2 ? " (two wrong answers in the epoch: 0)" : ""}`);
}
