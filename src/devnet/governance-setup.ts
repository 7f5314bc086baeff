import { Contract, getAddress, Interface, NonceManager, Wallet, type JsonRpcProvider } from "ethers";

import { CHALLENGER_ROLE } from "@avn/protocol/qos";

import { governedContracts } from "../deploy/two-chain.ts";
import { waitFor } from "../common/wait-for.ts";
import { Governance, type GovernanceAddresses } from "../governance/governance.ts";
import { DEVNET_L1_BLOCK_SECONDS } from "../common/stack-file.ts";
import type { ProtocolChange } from "@avn/protocol/governance/proposal";
import type { DevAccount } from "../common/stack-file.ts";
import { devnetProvider } from "./op-devnet.ts";

const NODE_REGISTRY_ROLES = new Interface([
  "function grantRole(bytes32 role, address account)",
  "function hasRole(bytes32 role, address account) view returns (bool)",
]);

/**
 * Moves the devnet's L1 on by `blocks` blocks and `seconds` seconds at once (anvil's `evm_increaseTime`
 * and `anvil_mine`): what waiting out a vote and a timelock takes on a live chain. L1 time only runs
 * ahead of the L2's, which the OP contracts accept (outputs and withdrawals only ever wait for L1 time).
 */
export async function advanceL1(l1: JsonRpcProvider, options: { blocks?: number; seconds?: number }): Promise<void> {
  if (options.seconds !== undefined && options.seconds > 0) await l1.send("evm_increaseTime", [options.seconds]);
  const blocks = Math.max(options.blocks ?? 0, options.seconds !== undefined && options.seconds > 0 ? 1 : 0);
  if (blocks > 0) await l1.send("anvil_mine", [`0x${blocks.toString(16)}`]);
}

/**
 * Carries `changes` through governance on a devnet, start to finish, as one holder of a majority of the
 * votes: delegate (if not yet), propose, vote for, queue, execute, each step taken as soon as the L1,
 * moved on with `advanceL1`, allows; then waits until `done` holds on L2 (the deposit relay carries the
 * message). Returns the proposal's id.
 */
export async function passOnDevnet(input: {
  l1: { rpcUrl: string; chainId: number };
  l2: { rpcUrl: string; chainId: number };
  voter: DevAccount;
  addresses: GovernanceAddresses;
  changes: ProtocolChange[];
  note?: string;
  done: (l2: JsonRpcProvider) => Promise<boolean>;
  onProgress?: (line: string) => void;
}): Promise<bigint> {
  const progress = input.onProgress ?? (() => undefined);
  const l1 = devnetProvider(input.l1.rpcUrl, input.l1.chainId);
  const l2 = devnetProvider(input.l2.rpcUrl, input.l2.chainId);
  try {
    const governance = new Governance({
      l1: new NonceManager(new Wallet(input.voter.privateKey, l1)),
      l2,
      addresses: input.addresses,
      l1BlockSeconds: DEVNET_L1_BLOCK_SECONDS,
    });
    const power = await governance.votingPower(input.voter.address);
    if (power.delegatee.toLowerCase() !== input.voter.address.toLowerCase()) await governance.delegate();
    const id = await governance.propose(input.changes, { note: input.note });
    progress(`Governance: proposal ${id} made; moving the devnet L1 through the vote and the timelock…`);
    const pending = await governance.status(id);
    await advanceL1(l1, { blocks: Number(pending.snapshotBlock - pending.block) + 1 });
    await governance.vote(id, "for");
    const active = await governance.status(id);
    await advanceL1(l1, { blocks: Number(active.deadlineBlock - active.block) + 1 });
    const eta = await governance.queue(id);
    const queued = await governance.status(id);
    await advanceL1(l1, { seconds: Number(eta - queued.time) + 1 });
    await governance.execute(id);
    progress(`Governance: proposal ${id} executed on L1; waiting for the deposit relay to carry it to L2…`);
    await waitFor(`proposal ${id} to take effect on L2`, () => input.done(l2), 60_000);
    return id;
  } finally {
    l1.destroy();
    l2.destroy();
  }
}

/**
 * The first proposal of a new deployment: the executor accepts the admin role of every L2 protocol
 * contract, whose handover the deployment started, and, when `challenger` is given, grants it
 * CHALLENGER_ROLE on NodeRegistry (the network's benchmark: docs/verification.md). After it, only
 * governance changes the protocol.
 */
export async function placeUnderGovernance(
  input: Omit<Parameters<typeof passOnDevnet>[0], "changes" | "done" | "note"> & { challenger?: string },
): Promise<bigint> {
  const contracts = governedContracts(input.addresses.l2);
  const nodeRegistry = input.addresses.l2.NodeRegistry;
  const { challenger } = input;
  const grant: ProtocolChange[] =
    challenger === undefined
      ? []
      : [
          {
            kind: "call",
            call: {
              target: getAddress(nodeRegistry) as `0x${string}`,
              value: 0n,
              data: NODE_REGISTRY_ROLES.encodeFunctionData("grantRole", [CHALLENGER_ROLE, challenger]) as `0x${string}`,
            },
          },
        ];
  return passOnDevnet({
    ...input,
    changes: [{ kind: "accept-admin" }, ...grant],
    note:
      challenger === undefined ? "Hand the L2 protocol to governance" : "Hand the L2 protocol to governance; name the network's challenger",
    done: async (l2) => {
      const admins = await Promise.all(
        contracts.map(
          (address) =>
            new Contract(address, ["function defaultAdmin() view returns (address)"], l2).getFunction("defaultAdmin")() as Promise<string>,
        ),
      );
      const handed = admins.every((admin) => admin.toLowerCase() === input.addresses.executor.toLowerCase());
      if (!handed || challenger === undefined) return handed;
      return (await new Contract(nodeRegistry, NODE_REGISTRY_ROLES, l2).getFunction("hasRole")(CHALLENGER_ROLE, challenger)) as boolean;
    },
  });
}
