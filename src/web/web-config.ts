import { readFile } from "node:fs/promises";
import path from "node:path";

import { parseNetworkConfig, type NetworkConfig } from "@avn/protocol/network-config";

import type { StackFile } from "../common/stack-file.ts";
import { DEVNET_L1_BLOCK_SECONDS } from "../common/stack-file.ts";

/**
 * The web app's network configuration for the local stack, from what the stack file knows: its two
 * chains, the addresses deployed on them, and the credits service when the stack runs one. Checked by
 * the app's own schema, so the server never serves a file the app would refuse. The intent layer's settlers come
 * with the contracts; the fee its solver takes (`intents.minFeeBps`), when the stack runs one.
 */
export function webConfigFromStack(stack: StackFile): NetworkConfig {
  const l1 = stack.contracts?.l1 ?? {};
  const l2 = stack.contracts?.l2 ?? {};
  return parseNetworkConfig({
    name: "Local devnet",
    l1: { chainId: stack.l1?.chainId, name: "Devnet L1", rpcUrl: stack.l1?.rpcUrl, blockSeconds: DEVNET_L1_BLOCK_SECONDS },
    l2: { chainId: stack.l2?.chainId, name: "Devnet L2", rpcUrl: stack.l2?.rpcUrl, wsUrl: stack.l2?.wsUrl },
    contracts: {
      l1: {
        PrimaryToken: l1.PrimaryToken,
        OptimismPortal: l1.OptimismPortal,
        L2OutputOracle: l1.L2OutputOracle,
        L1StandardBridge: l1.L1StandardBridge,
        // Governance (the Governance page): absent from a stack deployed before it, then the page says so.
        Governor: l1.Governor,
        Timelock: l1.Timelock,
        L1CrossDomainMessenger: l1.L1CrossDomainMessenger,
        // The intent layer (the Bridge page's fast withdrawals): absent from a stack deployed before it, then the page says so.
        DestinationSettler: l1.DestinationSettler,
        // Fast deposits' escrow (module L1Intents).
        OriginSettler: l1.OriginSettler,
      },
      l2: {
        PrimaryToken: l2.PrimaryToken,
        StakedToken: l2.StakedToken,
        NodeLicense: l2.NodeLicense,
        NodeRegistry: l2.NodeRegistry,
        VerificationRegistry: l2.VerificationRegistry,
        RewardPools: l2.RewardPools,
        GovernanceExecutor: l2.GovernanceExecutor,
        // The credits channel (the Credits page): absent from a stack without it, then the page says so.
        VoucherClaims: l2.VoucherClaims,
        OriginSettler: l2.OriginSettler,
        DestinationSettler: l2.DestinationSettler,
      },
    },
    credits: stack.credits === undefined ? undefined : { url: stack.credits.url },
    // The fee the stack's solver fills for: what the Bridge page's fast withdrawals offer it.
    intents: stack.solver === undefined ? undefined : { minFeeBps: stack.solver.minFeeBps },
  });
}

/** A committed network file of the web app (`apps/web/networks/<name>.json`), checked. */
export async function namedWebConfig(projectRoot: string, name: string): Promise<NetworkConfig> {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`"${name}" is not a network file name (lower-case letters, digits and dashes)`);
  const file = path.join(projectRoot, "apps", "web", "networks", `${name}.json`);
  const text = await readFile(file, "utf8").catch(() => {
    throw new Error(`no network file ${path.relative(projectRoot, file)}`);
  });
  return parseNetworkConfig(JSON.parse(text));
}
