import { Contract, type Signer } from "ethers";

// The part of OpenZeppelin's IAccessControlDefaultAdminRules the handover uses.
const DEFAULT_ADMIN_RULES_ABI = [
  "function defaultAdmin() view returns (address)",
  "function pendingDefaultAdmin() view returns (address newAdmin, uint48 schedule)",
  "function beginDefaultAdminTransfer(address newAdmin)",
];

export interface AdminHandover {
  contract: string;
  newAdmin: string;
  /** Unix time from which `newAdmin` may call `acceptDefaultAdminTransfer()`. */
  acceptableFrom: bigint;
}

/**
 * Starts the two-step transfer of the default admin role of each contract from the deployer to
 * `admin` (governance: a multisig or timelock). Idempotent: contracts already administered by `admin`,
 * or with the transfer to `admin` already pending, are left as they are, so a re-run after a failure
 * only does what is missing. `admin` then accepts on each contract after the transfer delay.
 */
export async function handOverAdmin(contracts: string[], admin: string, deployer: Signer): Promise<AdminHandover[]> {
  const handovers: AdminHandover[] = [];
  for (const address of contracts) {
    const contract = new Contract(address, DEFAULT_ADMIN_RULES_ABI, deployer);
    const currentAdmin = (await contract.getFunction("defaultAdmin").staticCall()) as string;
    if (currentAdmin.toLowerCase() === admin.toLowerCase()) continue;
    let [newAdmin, schedule] = (await contract.getFunction("pendingDefaultAdmin").staticCall()) as [string, bigint];
    if (newAdmin.toLowerCase() !== admin.toLowerCase()) {
      await (await contract.getFunction("beginDefaultAdminTransfer").send(admin)).wait();
      [newAdmin, schedule] = (await contract.getFunction("pendingDefaultAdmin").staticCall()) as [string, bigint];
    }
    handovers.push({ contract: address, newAdmin, acceptableFrom: schedule });
  }
  return handovers;
}
