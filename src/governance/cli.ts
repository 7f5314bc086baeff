import { JsonRpcProvider, NonceManager, Wallet } from "ethers";

import { runCli as runCommandLine, type Cli, type CliContext, type CliOption, type CliValues } from "../common/cli.ts";
import { formatVotes, Governance, GovernanceError, type ProposalStatus } from "./governance.ts";
import { roleHolders } from "./roles.ts";
import { devnetGovernanceNetwork, testnetGovernanceNetwork, type GovernanceNetwork } from "./network.ts";
import { address, integer, parseChanges, proposalId } from "./cli-arguments.ts";

export interface GovernanceCliContext extends CliContext {
  projectRoot: string;
  env: NodeJS.ProcessEnv;
}

const OPTIONS = {
  network: {
    type: "string",
    choices: ["devnet", "testnet"],
    default: "devnet",
    global: true,
    description:
      "devnet: the running local stack (.devnet/stack.json)\ntestnet: L1_TESTNET_RPC_URL, L2_TESTNET_RPC_URL, deploy/deployments, deploy/op-chains/l2Testnet.json",
  },
  account: {
    type: "string",
    value: "<name>",
    default: "deployer",
    global: true,
    description: "devnet only: a development account of the stack file",
  },
  to: { type: "string", value: "<address>", description: "another account than the sender's" },
  note: { type: "string", value: "<text>", description: "the proposal's description (its first line is its title)" },
  reason: { type: "string", value: "<text>", default: "", description: "why, recorded with the vote" },
  "l2-gas": { type: "string", value: "<gas>", description: "the gas of the batch on L2 (default: 1,000,000)" },
  "skip-l2-check": { type: "boolean", description: "propose without trying each call on L2 first" },
  "from-block": { type: "string", value: "<n>", default: "0", description: "the L2 block the search for role grants starts at" },
} as const satisfies Record<string, CliOption>;

type Values = CliValues<typeof OPTIONS>;

/** What a command works with: the contracts over both chains, and the account when it sends. */
interface Session {
  governance: Governance;
  account: NonceManager | undefined;
  l2: JsonRpcProvider;
}

const GOVERNANCE_CLI: Cli<typeof OPTIONS, GovernanceCliContext> = {
  invocation: "npm run gov --",
  about: "The protocol's governance: delegate, propose L2 changes, vote, queue, execute, and follow a proposal to L2.",
  usageCode: "INVALID_INPUT",
  options: OPTIONS,
  footer: "Keys: GOV_PRIVATE_KEY (required on testnet to send; on the devnet it overrides --account).",
  commands: {
    delegate: {
      summary: "delegate the account's votes (to itself by default, else --to): tokens vote only once delegated",
      options: ["to"],
      run: async ({ values }, context) =>
        withSession(values, context, { sends: true }, async ({ governance }) => {
          const { delegatee, votes } = await governance.delegate(values.to === undefined ? undefined : address(values.to, "--to"));
          context.print(
            `Votes delegated to ${delegatee}: it now holds ${formatVotes(votes)} votes (counted for proposals made from the next block on)`,
          );
        }),
    },
    propose: {
      summary: "one proposal making every change listed, on L2",
      arguments: "<change>...",
      options: ["note", "l2-gas", "skip-l2-check"],
      details: [
        "Each call is first tried on L2 as the executor would make it; --skip-l2-check when a pending proposal,",
        "such as accept-admin, makes it valid. Changes:",
        "  set-quorum <licenses>",
        "  set-request-fee <amount>        in staked-token base units: 2e18 is 2 tokens",
        "  set-job-timeout <seconds>",
        "  set-liveness-window <seconds>",
        "  accept-admin                    accept the admin role of the L2 contracts",
        '  calls <file.json>               raw calls: [{"target", "data" | "signature" + "args", "value"?}]',
      ].join("\n"),
      run: async ({ values, args }, context) => {
        const changes = await parseChanges(args);
        const l2GasLimit = values["l2-gas"] === undefined ? undefined : Number(integer(values["l2-gas"], "--l2-gas"));
        await withSession(values, context, { sends: true }, async ({ governance }) => {
          const id = await governance.propose(changes, { note: values.note, l2GasLimit, skipL2Check: values["skip-l2-check"] === true });
          const status = await governance.status(id);
          context.print(`Proposal ${id} made:`);
          printStatus(status, context.print);
        });
      },
    },
    vote: {
      summary: "vote on a proposal",
      arguments: "<id> for|against|abstain",
      options: ["reason"],
      run: async ({ values, args }, context) => {
        const id = proposalId(args[0]);
        const choice = args[1];
        if (choice !== "for" && choice !== "against" && choice !== "abstain")
          throw new GovernanceError("INVALID_INPUT", "Vote for, against or abstain: npm run gov -- vote <id> for");
        await withSession(values, context, { sends: true }, async ({ governance }) => {
          const weight = await governance.vote(id, choice, values.reason);
          context.print(`Voted ${choice} proposal ${id} with ${formatVotes(weight)} votes`);
          printStatus(await governance.status(id), context.print);
        });
      },
    },
    queue: {
      summary: "queue a proposal that passed in the timelock",
      arguments: "<id>",
      run: async ({ values, args }, context) => {
        const id = proposalId(args[0]);
        await withSession(values, context, { sends: true }, async ({ governance }) => {
          const eta = await governance.queue(id);
          context.print(`Proposal ${id} queued: executable from ${new Date(Number(eta) * 1000).toISOString()}`);
        });
      },
    },
    execute: {
      summary: "execute a queued proposal once the timelock releases it (its L2 change follows by the bridge)",
      arguments: "<id>",
      run: async ({ values, args }, context) => {
        const id = proposalId(args[0]);
        await withSession(values, context, { sends: true }, async ({ governance }) => {
          const { messageHash } = await governance.execute(id);
          context.print(
            `Proposal ${id} executed on L1${messageHash === undefined ? "" : `; its L2 message ${messageHash} is on its way (npm run gov -- status ${id})`}`,
          );
        });
      },
    },
    status: {
      summary: "one proposal, or every one: what it does, state, votes, time left, and whether L2 has executed it",
      arguments: "[<id>]",
      run: async ({ values, args }, context) => {
        const id = args[0] === undefined ? undefined : proposalId(args[0]);
        await withSession(values, context, { sends: false }, async ({ governance }) => {
          const statuses = id === undefined ? await governance.list() : [await governance.status(id)];
          if (statuses.length === 0) context.print("No proposal yet.");
          for (const status of statuses) printStatus(status, context.print);
        });
      },
    },
    power: {
      summary: "an account's votes and balance (the account's own by default, else --to)",
      options: ["to"],
      run: async ({ values }, context) => {
        const other = values.to === undefined ? undefined : address(values.to, "--to");
        await withSession(values, context, { sends: other === undefined }, async ({ governance, account }) => {
          const who = other ?? (await account!.getAddress());
          const power = await governance.votingPower(who);
          context.print(
            `${who}: ${formatVotes(power.votes)} votes, ${formatVotes(power.balance)} tokens, delegated to ${power.delegatee === "0x0000000000000000000000000000000000000000" ? "no one (delegate to vote)" : power.delegatee}`,
          );
        });
      },
    },
    roles: {
      summary: "who holds which role on each governed L2 contract (check before accepting the admin role)",
      options: ["from-block"],
      run: async ({ values }, context) => {
        const fromBlock = Number(integer(values["from-block"], "--from-block"));
        await withSession(values, context, { sends: false }, async ({ l2 }, network) => {
          for (const contract of await roleHolders(l2, network.addresses.l2, fromBlock)) {
            context.print(
              `${contract.contract} ${contract.address}: admin ${contract.defaultAdmin}${contract.pendingAdmin === undefined ? "" : ` (handover pending to ${contract.pendingAdmin})`}`,
            );
            for (const [role, holders] of Object.entries(contract.roles)) context.print(`  ${role}: ${holders.join(", ")}`);
          }
        });
      },
    },
  },
};

/** The governance CLI: parses `args`, runs one command, and returns the process exit code. */
export async function runCli(args: readonly string[], context: GovernanceCliContext): Promise<number> {
  return runCommandLine(GOVERNANCE_CLI, args, context);
}

/**
 * Runs `use` with the network's contracts (and the account, for a command that `sends` or reads the
 * account's own power), and closes the providers after.
 */
async function withSession(
  values: Values,
  context: GovernanceCliContext,
  { sends }: { sends: boolean },
  use: (session: Session, network: GovernanceNetwork) => Promise<void>,
): Promise<void> {
  const network = await loadNetwork(values.network, context);
  const l1 = new JsonRpcProvider(network.l1.rpcUrl, network.l1.chainId, { staticNetwork: true, cacheTimeout: -1 });
  const l2 = new JsonRpcProvider(network.l2.rpcUrl, network.l2.chainId, { staticNetwork: true, cacheTimeout: -1 });
  try {
    const account = sends ? accountOf(network, values.account, context.env, l1) : undefined;
    const governance = new Governance({ l1: account ?? l1, l2, addresses: network.addresses, l1BlockSeconds: network.l1BlockSeconds });
    await use({ governance, account, l2 }, network);
  } finally {
    l1.destroy();
    l2.destroy();
  }
}

async function loadNetwork(name: string, context: GovernanceCliContext): Promise<GovernanceNetwork> {
  if (name === "devnet") return devnetGovernanceNetwork(context.projectRoot);
  return testnetGovernanceNetwork(context.projectRoot, context.env);
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
