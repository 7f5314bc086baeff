import { Contract, id, Interface, ZeroAddress, type JsonRpcProvider } from "ethers";

import { roleHolders } from "../../governance/roles.ts";
import { GOVERNOR_ABI } from "./governance-run.ts";

// After the rehearsal's deployment and first proposal: the contracts' settings against the live parameter
// files, and every role on both chains against docs/governance.md.

const ROLE_EVENTS = new Interface([
  "event RoleGranted(bytes32 indexed role, address indexed account, address indexed sender)",
  "event RoleRevoked(bytes32 indexed role, address indexed account, address indexed sender)",
]);

/** The deployed contracts' settings against the live parameter files. */
export async function checkSettings(
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
  for (const name of ["StakedToken", "NodeLicense", "NodeRegistry", "VerificationRegistry", "RewardPools"]) {
    const contract = new Contract(l2[`L2#${name}`], ["function defaultAdminDelay() view returns (uint48)"], l2Provider);
    await expectValue(name, contract, "defaultAdminDelay", "L2", "adminTransferDelay");
  }
  return mismatches;
}

/**
 * Every role on both chains against docs/governance.md's table: on L2 the executor administers the five
 * governed contracts (no handover pending), the verification registry holds PROTOCOL_ROLE and
 * RECORDER_ROLE, the attestation verifier ATTESTATION_ROLE, the `rewardsFunder` parameter the reward
 * pools' REWARDS_FUNDER_ROLE, and no one else anything; on L1 the timelock administers itself, the governor is
 * its only proposer and canceller, anyone executes, and the guardian is the `proposalGuardian` parameter.
 * The deployer holds nothing.
 */
export async function checkRoles(
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
    RewardPools: l2["L2#RewardPools"],
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
