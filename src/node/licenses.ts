import type { NodeLicense, NodeRegistry } from "../../typechain-types/index.ts";

/** Where this node's licenses stand. */
export interface DelegationStatus {
  /** Licenses owned by an allowlisted wallet and delegated to this node's burner: the ones it votes for. */
  delegated: bigint[];
  /** Licenses owned by an allowlisted wallet but not delegated to this burner. */
  undelegated: Array<{ owner: string; licenseId: bigint }>;
}

// Bounds the reads per check; an owner with more licenses than this gets the first ones served.
const MAX_LICENSES_PER_OWNER = 256n;

/**
 * Reads, for each allowlisted owner, the licenses it holds (the license is ERC-721 Enumerable) and whether
 * each is delegated to `burner`. A license delegated to this burner by a wallet outside the allowlist is
 * ignored: the node works only for the owners its operator named. A delegation is void once the license
 * changes hands, so a transferred license drops out here by itself.
 */
export async function readDelegationStatus(
  contracts: { license: NodeLicense; nodeRegistry: NodeRegistry },
  owners: readonly string[],
  burner: string,
): Promise<DelegationStatus> {
  const status: DelegationStatus = { delegated: [], undelegated: [] };
  for (const owner of owners) {
    const count = await contracts.license.balanceOf(owner);
    const ids = await Promise.all(
      Array.from({ length: Number(count < MAX_LICENSES_PER_OWNER ? count : MAX_LICENSES_PER_OWNER) }, (_, index) =>
        contracts.license.tokenOfOwnerByIndex(owner, index),
      ),
    );
    const operators = await Promise.all(ids.map((id) => contracts.nodeRegistry.operatorOf(id)));
    ids.forEach((licenseId, index) => {
      if (operators[index].toLowerCase() === burner.toLowerCase()) status.delegated.push(licenseId);
      else status.undelegated.push({ owner, licenseId });
    });
  }
  status.delegated.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return status;
}

/** What the operator must do, in words, when no license is delegated to the burner yet. */
export function delegationInstructions(status: DelegationStatus, owners: readonly string[], burner: string, nodeRegistry: string): string {
  if (status.undelegated.length === 0) {
    return `No license owned by ${owners.join(", ")} is delegated to this node. Buy a license with one of these wallets, then delegate it to this node's burner ${burner}: from the owner wallet, call NodeRegistry(${nodeRegistry}).delegate([licenseId], ${burner}).`;
  }
  const byOwner = new Map<string, bigint[]>();
  for (const { owner, licenseId } of status.undelegated) byOwner.set(owner, [...(byOwner.get(owner) ?? []), licenseId]);
  const calls = [...byOwner].map(([owner, ids]) => `from ${owner}: NodeRegistry(${nodeRegistry}).delegate([${ids.join(", ")}], ${burner})`);
  return `Waiting for delegation: delegate your licenses to this node's burner ${burner}. ${calls.join("; ")}.`;
}
