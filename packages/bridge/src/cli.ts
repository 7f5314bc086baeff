import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";

import { ethers } from "ethers";

import { Bridge, type MessageStatusName } from "./bridge.ts";
import { BridgeError, describeUnexpected } from "./errors.ts";
import { devnetNetwork, testnetNetwork, type BridgeNetwork } from "./network.ts";

export interface CliContext {
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  print: (line: string) => void;
  printError: (line: string) => void;
}

const USAGE = `Usage: npm run bridge -- <command> [options]

Commands:
  deposit-eth     --amount <ETH>            L1 → L2
  deposit-token   --amount <tokens> [--approve]
                                            L1 → L2; --approve grants the bridge a missing allowance first
  withdraw-eth    --amount <ETH>            L2 → L1 (then prove, then finalize)
  withdraw-token  --amount <tokens>         L2 → L1 (then prove, then finalize)
  prove           --tx <L2 tx hash>         prove a withdrawal on L1
  finalize        --tx <L2 tx hash>         finalize a proven withdrawal after the finalization period
  status          --tx <tx hash>            the status of a transaction's cross-chain message
  wait            --tx <tx hash> [--until <STATUS>] [--timeout <seconds>]
                                            follow the status until it is reached (default RELAYED)

Options:
  --network devnet|testnet   devnet (default): the running local stack (.devnet/stack.json)
                             testnet: L1_TESTNET_RPC_URL, L2_TESTNET_RPC_URL, deploy/op-chains/l2Testnet.json
  --to <address>             recipient on the other chain (default: the sender)
  --account <name>           devnet only: a development account of the stack file (default: deployer)

Keys: BRIDGE_PRIVATE_KEY (required on testnet; on the devnet it overrides --account).`;

const STATUSES: MessageStatusName[] = [
  "UNCONFIRMED_L1_TO_L2_MESSAGE",
  "FAILED_L1_TO_L2_MESSAGE",
  "STATE_ROOT_NOT_PUBLISHED",
  "READY_TO_PROVE",
  "IN_CHALLENGE_PERIOD",
  "READY_FOR_RELAY",
  "RELAYED",
];

/** The bridge CLI: parses `args`, runs one command, and returns the process exit code. */
export async function runCli(args: string[], context: CliContext): Promise<number> {
  try {
    await run(args, context);
    return 0;
  } catch (error) {
    if (error instanceof BridgeError) {
      context.printError(`error [${error.code}]: ${error.message}`);
      return 1;
    }
    // Unexpected: the SDK's or the RPC's short reason, without a stack trace or any URL.
    context.printError(`error: ${describeUnexpected(error)}`);
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
        amount: { type: "string" },
        to: { type: "string" },
        tx: { type: "string" },
        until: { type: "string", default: "RELAYED" },
        timeout: { type: "string", default: "900" },
        approve: { type: "boolean", default: false },
        account: { type: "string", default: "deployer" },
        help: { type: "boolean", default: false },
      },
    });
  } catch (error) {
    throw new BridgeError("INVALID_ARGUMENT", `${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [command] = positionals;
  if (values.help || command === undefined) {
    context.print(USAGE);
    return;
  }

  const amount = () => parseAmount(values.amount);
  const tx = () => {
    if (values.tx === undefined) throw new BridgeError("INVALID_ARGUMENT", `${command} needs --tx <transaction hash>`);
    return values.tx;
  };
  const recipient = values.to === undefined ? undefined : parseAddress(values.to);
  const connect = async () => {
    const network = await loadNetwork(values.network, context);
    const bridge = await Bridge.connect(network, await privateKey(values.network, values.account, context));
    context.print(`${network.name}: L1 chain ${network.l1.chainId}, L2 chain ${network.l2.chainId}, account ${bridge.address}`);
    return bridge;
  };

  switch (command) {
    case "deposit-eth": {
      const value = amount();
      const bridge = await connect();
      const hash = await bridge.depositEth(value, recipient);
      context.print(`Deposited ${ethers.utils.formatEther(value)} ETH: L1 transaction ${hash}`);
      context.print(`Follow it: npm run bridge -- wait --tx ${hash} --network ${values.network}`);
      return;
    }
    case "deposit-token": {
      const value = amount();
      const bridge = await connect();
      const hash = await bridge.depositPrimaryToken(value, { approve: values.approve, recipient });
      context.print(`Deposited ${ethers.utils.formatEther(value)} primary tokens: L1 transaction ${hash}`);
      context.print(`Follow it: npm run bridge -- wait --tx ${hash} --network ${values.network}`);
      return;
    }
    case "withdraw-eth":
    case "withdraw-token": {
      const value = amount();
      const bridge = await connect();
      const hash =
        command === "withdraw-eth" ? await bridge.withdrawEth(value, recipient) : await bridge.withdrawPrimaryToken(value, recipient);
      context.print(`Withdrawal of ${ethers.utils.formatEther(value)} started: L2 transaction ${hash}`);
      context.print(`Next: wait for READY_TO_PROVE, then prove, then after the finalization period finalize (--tx ${hash})`);
      return;
    }
    case "prove": {
      const bridge = await connect();
      context.print(`Proven on L1: transaction ${await bridge.prove(tx())}`);
      return;
    }
    case "finalize": {
      const bridge = await connect();
      context.print(`Finalized on L1: transaction ${await bridge.finalize(tx())}`);
      return;
    }
    case "status": {
      const bridge = await connect();
      const { direction, status } = await bridge.status(tx());
      context.print(`${direction} message: ${status}`);
      return;
    }
    case "wait": {
      const until = values.until.toUpperCase() as MessageStatusName;
      if (!STATUSES.includes(until)) throw new BridgeError("INVALID_ARGUMENT", `--until must be one of ${STATUSES.join(", ")}`);
      const timeoutSeconds = Number(values.timeout);
      if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
        throw new BridgeError("INVALID_ARGUMENT", "--timeout must be a positive number of seconds");
      const bridge = await connect();
      const reached = await bridge.waitFor(tx(), until, {
        timeoutMs: timeoutSeconds * 1000,
        onStatus: (status) => context.print(`status: ${status}`),
      });
      if (reached === "FAILED_L1_TO_L2_MESSAGE") {
        throw new BridgeError("DEPOSIT_FAILED", "The deposit's message failed on L2: it must be replayed with more gas");
      }
      return;
    }
    default:
      throw new BridgeError("INVALID_ARGUMENT", `Unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
  }
}

function parseAmount(text: string | undefined): bigint {
  if (text === undefined) throw new BridgeError("INVALID_ARGUMENT", "--amount is required (in whole units, e.g. 1.5)");
  let value: bigint;
  try {
    value = BigInt(ethers.utils.parseEther(text).toString());
  } catch {
    throw new BridgeError("INVALID_ARGUMENT", `--amount ${JSON.stringify(text)} is not a decimal number with at most 18 decimals`);
  }
  if (value <= 0n) throw new BridgeError("INVALID_ARGUMENT", "--amount must be above zero");
  return value;
}

function parseAddress(text: string): string {
  let address: string;
  try {
    address = ethers.utils.getAddress(text);
  } catch {
    throw new BridgeError("INVALID_ARGUMENT", `--to ${JSON.stringify(text)} is not an address (or its checksum is wrong)`);
  }
  if (address === ethers.constants.AddressZero) {
    throw new BridgeError("INVALID_ARGUMENT", "--to is the zero address: the funds would be lost");
  }
  return address;
}

async function loadNetwork(name: string, context: CliContext): Promise<BridgeNetwork> {
  if (name === "devnet") return devnetNetwork(path.join(context.projectRoot, ".devnet", "stack.json"));
  if (name === "testnet") return testnetNetwork({ projectRoot: context.projectRoot, env: context.env });
  throw new BridgeError("INVALID_ARGUMENT", `--network must be devnet or testnet, not ${JSON.stringify(name)}`);
}

async function privateKey(networkName: string, account: string, context: CliContext): Promise<string> {
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
