import { Contract, id, Interface, type Provider } from "ethers";

import type { GovernedContracts } from "@avn/protocol/governance/proposal";

const ACCESS_CONTROL = new Interface([
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
  "function defaultAdmin() view returns (address)",
  "function pendingDefaultAdmin() view returns (address newAdmin, uint48 schedule)",
]);

const ROLE_NAMES = new Map<string, string>([
  [`0x${"00".repeat(32)}`, "DEFAULT_ADMIN_ROLE"],
  ...["PROTOCOL_ROLE", "RECORDER_ROLE", "REWARDS_FUNDER_ROLE", "ATTESTATION_ROLE", "OPERATOR_ROLE", "CHALLENGER_ROLE"].map(
    (name) => [id(name), name] as [string, string],
  ),
]);

export interface ContractRoles {
  contract: string;
  address: string;
  defaultAdmin: string;
  pendingAdmin: string | undefined;
  /** Each role held, by name (or hash), and its holders now. */
  roles: Record<string, string[]>;
}

/**
 * Who holds which role on each governed contract now, replayed from their RoleGranted and RoleRevoked
 * events since `fromBlock`: what voters check before accepting the admin role (a role granted before the
 * handover survives it) and after.
 */
export async function roleHolders(l2: Provider, contracts: GovernedContracts, fromBlock = 0): Promise<ContractRoles[]> {
  const result: ContractRoles[] = [];
  for (const [name, address] of Object.entries(contracts) as Array<[string, string]>) {
    const logs = await l2.getLogs({
      address,
      topics: [[ACCESS_CONTROL.getEvent("RoleGranted")!.topicHash, ACCESS_CONTROL.getEvent("RoleRevoked")!.topicHash]],
      fromBlock,
    });
    const holders = new Map<string, Set<string>>();
    for (const log of logs) {
      const event = ACCESS_CONTROL.parseLog(log)!;
      const role = ROLE_NAMES.get(event.args.role as string) ?? (event.args.role as string);
      const set = holders.get(role) ?? new Set<string>();
      if (event.name === "RoleGranted") set.add(event.args.account as string);
      else set.delete(event.args.account as string);
      holders.set(role, set);
    }
    const contract = new Contract(address, ACCESS_CONTROL, l2);
    const [defaultAdmin, pending] = await Promise.all([
      contract.getFunction("defaultAdmin")() as Promise<string>,
      contract.getFunction("pendingDefaultAdmin")() as Promise<[string, bigint]>,
    ]);
    result.push({
      contract: name,
      address,
      defaultAdmin,
      pendingAdmin: pending[0] === "0x0000000000000000000000000000000000000000" ? undefined : pending[0],
      roles: Object.fromEntries([...holders.entries()].filter(([, set]) => set.size > 0).map(([role, set]) => [role, [...set]])),
    });
  }
  return result;
}
