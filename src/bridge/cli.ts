// `npm run bridge -- <command>`: the bridge's command line. The library (ethers v5 and @eth-optimism/sdk)
// is packages/bridge, imported by its package name; this layer reads what was typed with the root's ethers
// v6 and the repository's CLI skeleton, and never imports ethers v5 itself.
import { readFile } from "node:fs/promises";
import path from "node:path";

import { Bridge, BridgeError, devnetNetwork, testnetNetwork, type BridgeNetwork, type MessageStatusName } from "@avn/bridge";
import { formatEther, getAddress, parseEther, ZeroAddress } from "ethers";

import { runCli as runCommandLine, type Cli, type CliContext, type CliOption, type CliValues } from "../common/cli.ts";
import { chainNames, fastTransfer, type FastDirection } from "./fast-transfer.ts";

export interface BridgeCliContext extends CliContext {
  projectRoot: string;
  env: NodeJS.ProcessEnv;
}

const STATUSES: MessageStatusName[] = [
  "UNCONFIRMED_L1_TO_L2_MESSAGE",
  "FAILED_L1_TO_L2_MESSAGE",
  "STATE_ROOT_NOT_PUBLISHED",
  "READY_TO_PROVE",
  "IN_CHALLENGE_PERIOD",
  "READY_FOR_RELAY",
  "RELAYED",
];

const OPTIONS = {
  network: {
    type: "string",
    choices: ["devnet", "testnet"],
    default: "devnet",
    global: true,
    description:
      "devnet: the running local stack (.devnet/stack.json)\ntestnet: L1_TESTNET_RPC_URL, L2_TESTNET_RPC_URL, deploy/op-chains/l2Testnet.json",
  },
  account: {
    type: "string",
    value: "<name>",
    default: "deployer",
    global: true,
    description: "devnet only: a development account of the stack file",
  },
  amount: { type: "string", value: "<amount>", description: "an amount in whole units of ETH or of the token, such as 1.5" },
  to: { type: "string", value: "<address>", description: "the recipient on the other chain (default: the sender)" },
  approve: { type: "boolean", description: "grant the bridge a missing allowance first" },
  tx: { type: "string", value: "<tx hash>", description: "the hash of the transaction that sent the message" },
  until: { type: "string", value: "<status>", default: "RELAYED", description: "the message status to wait for" },
  timeout: { type: "string", value: "<seconds>", default: "900", description: "how long to wait at most" },
  asset: {
    type: "string",
    choices: ["eth", "token"],
    default: "token",
    description: "fast-withdraw, fast-deposit: ETH or the primary token",
  },
  "fee-bps": {
    type: "string",
    value: "<basis points>",
    default: "100",
    description:
      "fast-withdraw, fast-deposit: the filler's fee; the recipient gets the amount less it (100 = 1%, what the devnet's solver takes)",
  },
  settled: {
    type: "boolean",
    description:
      "fast-withdraw, fast-deposit: follow the order until the solver is repaid on the origin chain, not only until it is filled",
  },
} as const satisfies Record<string, CliOption>;

type Values = CliValues<typeof OPTIONS>;

const BRIDGE_CLI: Cli<typeof OPTIONS, BridgeCliContext> = {
  invocation: "npm run bridge --",
  about: "Deposits and withdrawals of ETH and the primary token through the OP standard bridge.",
  usageCode: "INVALID_ARGUMENT",
  options: OPTIONS,
  footer: "Keys: BRIDGE_PRIVATE_KEY (required on testnet; on the devnet it overrides --account).",
  commands: {
    "deposit-eth": {
      summary: "L1 → L2",
      options: ["amount", "to"],
      required: ["amount"],
      run: async ({ values }, context) => {
        const [value, to] = [parseAmount(values.amount!), recipient(values)];
        const bridge = await connect(values, context);
        const hash = await bridge.depositEth(value, to);
        context.print(`Deposited ${formatEther(value)} ETH: L1 transaction ${hash}`);
        context.print(`Follow it: npm run bridge -- wait --tx ${hash} --network ${values.network}`);
      },
    },
    "deposit-token": {
      summary: "L1 → L2; --approve grants the bridge a missing allowance first",
      options: ["amount", "approve", "to"],
      required: ["amount"],
      run: async ({ values }, context) => {
        const [value, to] = [parseAmount(values.amount!), recipient(values)];
        const bridge = await connect(values, context);
        const hash = await bridge.depositPrimaryToken(value, { approve: values.approve === true, recipient: to });
        context.print(`Deposited ${formatEther(value)} primary tokens: L1 transaction ${hash}`);
        context.print(`Follow it: npm run bridge -- wait --tx ${hash} --network ${values.network}`);
      },
    },
    "withdraw-eth": {
      summary: "L2 → L1 (then prove, then finalize)",
      options: ["amount", "to"],
      required: ["amount"],
      run: async ({ values }, context) => withdraw("eth", values, context),
    },
    "withdraw-token": {
      summary: "L2 → L1 (then prove, then finalize)",
      options: ["amount", "to"],
      required: ["amount"],
      run: async ({ values }, context) => withdraw("token", values, context),
    },
    "fast-withdraw": {
      summary: "L2 → L1 in seconds: an intent order a solver fills on L1 for a fee (docs/intents.md)",
      details:
        "Opens an order in the L2's OriginSettler escrowing --amount; a solver pays the amount less --fee-bps to the recipient on L1 within a few blocks, then follows it until it is filled (--settled: until the solver is repaid on the L2). An order nobody fills is refundable after its deadline (10 minutes) and the settlement window.",
      options: ["amount", "asset", "fee-bps", "to", "settled", "timeout"],
      required: ["amount"],
      run: async ({ values }, context) => fastCommand("withdraw", values, context),
    },
    "fast-deposit": {
      summary: "L1 → L2 at the next L2 block: an intent order a solver fills on the L2 for a fee (docs/intents.md)",
      details:
        "Opens an order in L1's L1OriginSettler escrowing --amount; a solver pays the amount less --fee-bps to the recipient on the L2 at its next block, then follows it until it is filled (--settled: until the solver is repaid on L1, after the challenge period). An order nobody fills is refundable after its deadline (10 minutes) and the settlement window.",
      options: ["amount", "asset", "fee-bps", "to", "settled", "timeout"],
      required: ["amount"],
      run: async ({ values }, context) => fastCommand("deposit", values, context),
    },
    prove: {
      summary: "prove a withdrawal on L1 (--tx: its L2 transaction)",
      options: ["tx"],
      required: ["tx"],
      run: async ({ values }, context) => {
        const bridge = await connect(values, context);
        context.print(`Proven on L1: transaction ${await bridge.prove(values.tx!)}`);
      },
    },
    finalize: {
      summary: "finalize a proven withdrawal after the finalization period",
      options: ["tx"],
      required: ["tx"],
      run: async ({ values }, context) => {
        const bridge = await connect(values, context);
        context.print(`Finalized on L1: transaction ${await bridge.finalize(values.tx!)}`);
      },
    },
    status: {
      summary: "the status of a transaction's cross-chain message",
      options: ["tx"],
      required: ["tx"],
      run: async ({ values }, context) => {
        const bridge = await connect(values, context);
        const { direction, status } = await bridge.status(values.tx!);
        context.print(`${direction} message: ${status}`);
      },
    },
    wait: {
      summary: "follow the status until it is reached, printing each",
      details: `Statuses: deposits ${STATUSES.slice(0, 2).join(" or ")} → RELAYED; withdrawals ${STATUSES.slice(2).join(" → ")}.`,
      options: ["tx", "until", "timeout"],
      required: ["tx"],
      run: async ({ values }, context) => {
        const until = values.until.toUpperCase() as MessageStatusName;
        if (!STATUSES.includes(until)) throw new BridgeError("INVALID_ARGUMENT", `--until must be one of ${STATUSES.join(", ")}`);
        const timeoutSeconds = Number(values.timeout);
        if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
          throw new BridgeError("INVALID_ARGUMENT", "--timeout must be a positive number of seconds");
        const bridge = await connect(values, context);
        const reached = await bridge.waitFor(values.tx!, until, {
          timeoutMs: timeoutSeconds * 1000,
          onStatus: (status) => context.print(`status: ${status}`),
        });
        if (reached === "FAILED_L1_TO_L2_MESSAGE") {
          throw new BridgeError("DEPOSIT_FAILED", "The deposit's message failed on L2: it must be replayed with more gas");
        }
      },
    },
  },
};

/** The bridge CLI: parses `args`, runs one command, and returns the process exit code. */
export async function runCli(args: readonly string[], context: BridgeCliContext): Promise<number> {
  return runCommandLine(BRIDGE_CLI, args, context);
}

async function fastCommand(direction: FastDirection, values: Values, context: BridgeCliContext): Promise<void> {
  const [amount, to] = [parseAmount(values.amount!), recipient(values)];
  const feeBps = Number(values["fee-bps"]);
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps >= 10_000)
    throw new BridgeError("INVALID_ARGUMENT", "--fee-bps must be a whole number of basis points from 0 to 9999");
  const timeoutSeconds = Number(values.timeout);
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
    throw new BridgeError("INVALID_ARGUMENT", "--timeout must be a positive number of seconds");
  const network = await loadNetwork(values.network, context);
  const originSettler = await originSettlerOf(direction, values.network, context);
  const asset = values.asset as "eth" | "token";
  const unit = asset === "eth" ? "ETH" : "primary tokens";
  const names = chainNames(direction);
  const settler = direction === "withdraw" ? "OriginSettler" : "L1OriginSettler";
  const settledBy = direction === "withdraw" ? "on a proof of its fill" : "on its report, relayed after the challenge period";
  const last = await fastTransfer(
    { direction, asset, amount, feeBps, recipient: to },
    {
      l1RpcUrl: network.l1.rpcUrl,
      l2RpcUrl: network.l2.rpcUrl,
      originSettler,
      privateKey: await privateKey(values.network, values.account, context),
    },
    {
      untilSettled: values.settled === true,
      timeoutMs: timeoutSeconds * 1000,
      onStage: (stage) => {
        if (stage.stage === "approved")
          context.print(`Approved the ${settler} for the primary token: ${names.origin} transaction ${stage.hash}`);
        if (stage.stage === "opened")
          context.print(
            `Order ${stage.orderId} opened: ${formatEther(amount)} ${unit} escrowed on ${names.origin}, ${formatEther(stage.output)} to be paid on ${names.destination} (${names.origin} transaction ${stage.hash})`,
          );
        if (stage.stage === "filled")
          context.print(
            `Filled on ${names.destination} at ${new Date(Number(stage.filledAt) * 1000).toISOString()}: the recipient is paid`,
          );
        if (stage.stage === "settled") context.print(`Settled on ${names.origin}: the solver was repaid from the escrow ${settledBy}`);
        if (stage.stage === "refundable")
          context.print(`Not filled: refundable since ${new Date(stage.refundableAfter * 1000).toISOString()} (${settler}.refund)`);
      },
    },
  );
  if (last.stage === "refundable")
    throw new BridgeError("TIMEOUT", "No solver filled the order before its deadline; its escrow is refundable");
}

/**
 * The network's origin settler of `direction` (the L2's `OriginSettler`, L1's `L1OriginSettler`): the stack file's on
 * the devnet, the deployment records' on the test network.
 */
async function originSettlerOf(direction: FastDirection, networkName: string, context: BridgeCliContext): Promise<string> {
  const chain = direction === "withdraw" ? "l2" : "l1";
  const where =
    networkName === "devnet"
      ? path.join(context.projectRoot, ".devnet", "stack.json")
      : path.join(
          context.projectRoot,
          "deploy",
          "deployments",
          `chain-${chain === "l2" ? 123420000418 : 11155111}`,
          "deployed_addresses.json",
        );
  const text = await readFile(where, "utf8").catch(() => "{}");
  const parsed = JSON.parse(text) as { contracts?: Record<string, Record<string, string> | undefined> } & Record<string, unknown>;
  const address =
    networkName === "devnet"
      ? parsed.contracts?.[chain]?.OriginSettler
      : parsed[direction === "withdraw" ? "L2#OriginSettler" : "L1Intents#L1OriginSettler"];
  if (typeof address !== "string")
    throw new BridgeError(
      "CONFIGURATION",
      `No ${chain === "l2" ? "OriginSettler" : "L1OriginSettler"} is known for ${networkName} (${path.relative(context.projectRoot, where)}): deploy the intent layer first`,
    );
  return address;
}

async function withdraw(asset: "eth" | "token", values: Values, context: BridgeCliContext): Promise<void> {
  const [value, to] = [parseAmount(values.amount!), recipient(values)];
  const bridge = await connect(values, context);
  const hash = asset === "eth" ? await bridge.withdrawEth(value, to) : await bridge.withdrawPrimaryToken(value, to);
  context.print(`Withdrawal of ${formatEther(value)} started: L2 transaction ${hash}`);
  context.print(`Next: wait for READY_TO_PROVE, then prove, then after the finalization period finalize (--tx ${hash})`);
}

async function connect(values: Values, context: BridgeCliContext): Promise<Bridge> {
  const network = await loadNetwork(values.network, context);
  const bridge = await Bridge.connect(network, await privateKey(values.network, values.account, context));
  context.print(`${network.name}: L1 chain ${network.l1.chainId}, L2 chain ${network.l2.chainId}, account ${bridge.address}`);
  return bridge;
}

function parseAmount(text: string): bigint {
  let value: bigint;
  try {
    value = parseEther(text);
  } catch {
    throw new BridgeError("INVALID_ARGUMENT", `--amount ${JSON.stringify(text)} is not a decimal number with at most 18 decimals`);
  }
  if (value <= 0n) throw new BridgeError("INVALID_ARGUMENT", "--amount must be above zero");
  return value;
}

function recipient(values: Values): string | undefined {
  if (values.to === undefined) return undefined;
  let address: string;
  try {
    address = getAddress(values.to);
  } catch {
    throw new BridgeError("INVALID_ARGUMENT", `--to ${JSON.stringify(values.to)} is not an address (or its checksum is wrong)`);
  }
  if (address === ZeroAddress) throw new BridgeError("INVALID_ARGUMENT", "--to is the zero address: the funds would be lost");
  return address;
}

async function loadNetwork(name: string, context: BridgeCliContext): Promise<BridgeNetwork> {
  if (name === "devnet") return devnetNetwork(path.join(context.projectRoot, ".devnet", "stack.json"));
  return testnetNetwork({ projectRoot: context.projectRoot, env: context.env });
}

async function privateKey(networkName: string, account: string, context: BridgeCliContext): Promise<string> {
  const fromEnv = context.env.BRIDGE_PRIVATE_KEY;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  if (networkName !== "devnet") throw new BridgeError("CONFIGURATION", "Set BRIDGE_PRIVATE_KEY to the key of the account to bridge with");
  // The devnet's accounts are anvil's public development accounts, published in the stack file.
  const stack = JSON.parse(await readFile(path.join(context.projectRoot, ".devnet", "stack.json"), "utf8")) as {
    accounts?: Record<string, { privateKey?: string } | undefined>;
  };
  const key = stack.accounts?.[account]?.privateKey;
  if (typeof key !== "string") {
    throw new BridgeError(
      "CONFIGURATION",
      `The stack file has no account ${JSON.stringify(account)} (it has: ${Object.keys(stack.accounts ?? {}).join(", ")})`,
    );
  }
  return key;
}
