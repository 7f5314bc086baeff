import { parseArgs } from "node:util";

import { JsonRpcProvider, NonceManager, Wallet, type ContractRunner } from "ethers";

import { describeError } from "../common/describe-error.ts";
import { formatVotes, Governance, GovernanceError, type ProposalStatus } from "./governance.ts";
import { roleHolders } from "./roles.ts";
import { devnetGovernanceNetwork, testnetGovernanceNetwork, type GovernanceNetwork } from "./network.ts";
import { address, integer, parseChanges, proposalId } from "./cli-arguments.ts";

export interface CliContext {
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  print: (line: string) => void;
  printError: (line: string) => void;
}

const USAGE = `Usage: npm run gov -- <command> [options]

Commands:
  delegate [--to <address>]          delegate the account's votes (to itself by default): tokens vote only once delegated
  propose <change>... [--note <text>] [--l2-gas <gas>] [--skip-l2-check]
                                     one proposal making every change listed, on L2 (each call is first tried
                                     on L2 as the executor would make it; --skip-l2-check when a pending
                                     proposal, such as accept-admin, makes it valid):
                                       set-quorum <licenses>
                                       set-request-fee <amount>        in staked-token base units: 2e18 is 2 tokens
                                       set-job-timeout <seconds>
                                       set-liveness-window <seconds>
                                       accept-admin                    accept the admin role of the L2 contracts
                                       calls <file.json>               raw calls: [{"target", "data" | "signature" + "args", "value"?}]
  vote <id> for|against|abstain [--reason <text>]
  queue <id>                         queue a proposal that passed in the timelock
  execute <id>                       execute a queued proposal once the timelock releases it (its L2 change follows by the bridge)
  status [<id>]                      one proposal, or every one: what it does, state, votes, time left, and whether L2 has executed it
  power [--to <address>]             an account's votes and balance (the account's own by default)
  roles [--from-block <n>]           who holds which role on each governed L2 contract (check before accepting the admin role)

Options:
  --network devnet|testnet   devnet (default): the running local stack (.devnet/stack.json)
                             testnet: L1_TESTNET_RPC_URL, L2_TESTNET_RPC_URL, deploy/deployments, deploy/op-chains/l2Testnet.json
  --account <name>           devnet only: a development account of the stack file (default: deployer)

Keys: GOV_PRIVATE_KEY (required on testnet to send; on the devnet it overrides --account).`;

/** The governance CLI: parses `args`, runs one command, and returns the process exit code. */
export async function runCli(args: string[], context: CliContext): Promise<number> {
  try {
    await run(args, context);
    return 0;
  } catch (error) {
    if (error instanceof GovernanceError) {
      context.printError(`error [${error.code}]: ${error.message}`);
      return 1;
    }
    // Unexpected (an RPC down, a revert nobody foresaw): its short reason, without a stack trace or a URL.
    context.printError(`error: ${describeError(error)}`);
    return 2;
  }
}

async function run(args: string[], context: CliContext): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        network: { type: "string", default: "devnet" },
        account: { type: "string", default: "deployer" },
        to: { type: "string" },
        note: { type: "string" },
        reason: { type: "string", default: "" },
        "l2-gas": { type: "string" },
        "skip-l2-check": { type: "boolean", default: false },
        "from-block": { type: "string", default: "0" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    throw new GovernanceError("INVALID_INPUT", `${(error as Error).message}\n\n${USAGE}`);
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help || command === undefined || command === "help") {
    context.print(USAGE);
    return;
  }
  const { values } = parsed;
  const network = await loadNetwork(values.network, context);
  const l1 = new JsonRpcProvider(network.l1.rpcUrl, network.l1.chainId, { staticNetwork: true, cacheTimeout: -1 });
  const l2 = new JsonRpcProvider(network.l2.rpcUrl, network.l2.chainId, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const sends = ["delegate", "propose", "vote", "queue", "execute"].includes(command);
    const account =
      sends || (command === "power" && values.to === undefined) ? accountOf(network, values.account, context.env, l1) : undefined;
    const runner: ContractRunner = account ?? l1;
    const governance = new Governance({ l1: runner, l2, addresses: network.addresses, l1BlockSeconds: network.l1BlockSeconds });
    switch (command) {
      case "delegate": {
        const { delegatee, votes } = await governance.delegate(values.to === undefined ? undefined : address(values.to, "--to"));
        context.print(
          `Votes delegated to ${delegatee}: it now holds ${formatVotes(votes)} votes (counted for proposals made from the next block on)`,
        );
        return;
      }
      case "power": {
        const who = values.to === undefined ? await account!.getAddress() : address(values.to, "--to");
        const power = await governance.votingPower(who);
        context.print(
          `${who}: ${formatVotes(power.votes)} votes, ${formatVotes(power.balance)} tokens, delegated to ${power.delegatee === "0x0000000000000000000000000000000000000000" ? "no one (delegate to vote)" : power.delegatee}`,
        );
        return;
      }
      case "propose": {
        const changes = await parseChanges(rest);
        const l2GasLimit = values["l2-gas"] === undefined ? undefined : Number(integer(values["l2-gas"], "--l2-gas"));
        const id = await governance.propose(changes, { note: values.note, l2GasLimit, skipL2Check: values["skip-l2-check"] });
        const status = await governance.status(id);
        context.print(`Proposal ${id} made:`);
        printStatus(status, context.print);
        return;
      }
      case "vote": {
        const id = proposalId(rest[0]);
        const choice = rest[1];
        if (choice !== "for" && choice !== "against" && choice !== "abstain")
          throw new GovernanceError("INVALID_INPUT", "Vote for, against or abstain: npm run gov -- vote <id> for");
        const weight = await governance.vote(id, choice, values.reason);
        context.print(`Voted ${choice} proposal ${id} with ${formatVotes(weight)} votes`);
        printStatus(await governance.status(id), context.print);
        return;
      }
      case "queue": {
        const id = proposalId(rest[0]);
        const eta = await governance.queue(id);
        context.print(`Proposal ${id} queued: executable from ${new Date(Number(eta) * 1000).toISOString()}`);
        return;
      }
      case "execute": {
        const id = proposalId(rest[0]);
        const { messageHash } = await governance.execute(id);
        context.print(
          `Proposal ${id} executed on L1${messageHash === undefined ? "" : `; its L2 message ${messageHash} is on its way (npm run gov -- status ${id})`}`,
        );
        return;
      }
      case "status": {
        const statuses = rest[0] === undefined ? await governance.list() : [await governance.status(proposalId(rest[0]))];
        if (statuses.length === 0) context.print("No proposal yet.");
        for (const status of statuses) printStatus(status, context.print);
        return;
      }
      case "roles": {
        for (const contract of await roleHolders(l2, network.addresses.l2, Number(integer(values["from-block"], "--from-block")))) {
          context.print(
            `${contract.contract} ${contract.address}: admin ${contract.defaultAdmin}${contract.pendingAdmin === undefined ? "" : ` (handover pending to ${contract.pendingAdmin})`}`,
          );
          for (const [role, holders] of Object.entries(contract.roles)) context.print(`  ${role}: ${holders.join(", ")}`);
        }
        return;
      }
      default:
        throw new GovernanceError("INVALID_INPUT", `Unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
    }
  } finally {
    l1.destroy();
    l2.destroy();
  }
}

async function loadNetwork(name: string, context: CliContext): Promise<GovernanceNetwork> {
  if (name === "devnet") return devnetGovernanceNetwork(context.projectRoot);
  if (name === "testnet") return testnetGovernanceNetwork(context.projectRoot, context.env);
  throw new GovernanceError("INVALID_INPUT", `--network must be devnet or testnet, not ${JSON.stringify(name)}`);
}

function accountOf(network: GovernanceNetwork, accountName: string, env: NodeJS.ProcessEnv, l1: JsonRpcProvider): NonceManager {
  const key = env.GOV_PRIVATE_KEY;
  if (key !== undefined && key !== "") {
    try {
      return new NonceManager(new Wallet(key, l1));
    } catch {
      throw new GovernanceError("CONFIGURATION", "GOV_PRIVATE_KEY is not a private key"); // never echo the value
    }
  }
  if (network.name !== "devnet") throw new GovernanceError("NO_SIGNER", "Set GOV_PRIVATE_KEY to send on the test network");
  const account = network.accounts[accountName];
  if (account === undefined)
    throw new GovernanceError(
      "INVALID_INPUT",
      `The stack file has no account ${JSON.stringify(accountName)} (it has: ${Object.keys(network.accounts).join(", ")})`,
    );
  return new NonceManager(new Wallet(account.privateKey, l1));
}

function printStatus(status: ProposalStatus, print: (line: string) => void): void {
  print(`Proposal ${status.id}: ${status.state}${status.description === undefined ? "" : ` — ${status.description.split("\n")[0]}`}`);
  for (const change of status.changes) print(`  ${change}`);
  for (const warning of status.warnings) print(`  warning: ${warning}`);
  if (status.l2Deadline !== undefined) print(`  runs on L2 no later than ${new Date(Number(status.l2Deadline) * 1000).toISOString()}`);
  print(
    `  votes: for ${formatVotes(status.votes.for)}, against ${formatVotes(status.votes.against)}, abstain ${formatVotes(status.votes.abstain)} (quorum ${formatVotes(status.quorum)}; snapshot block ${status.snapshotBlock}, vote ends at block ${status.deadlineBlock})`,
  );
  if (status.l2 !== undefined) print(`  L2 message ${status.l2.messageHash}: ${status.l2.outcome}`);
  print(`  next: ${status.next}`);
}
