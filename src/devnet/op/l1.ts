import { Contract, ZeroAddress, zeroPadValue, type Signer } from "ethers";

import { opArtifact, opFactory } from "../../op/artifacts.ts";

/** The settings of the devnet's OP chain that its L1 contracts hold. */
export interface OpL1Config {
  /** Owner of the system config, guardian and challenger in one (a devnet). */
  admin: string;
  /** L2 block gas limit (the live L2 runs 30M). */
  l2GasLimit: bigint;
}

/** The output oracle's settings, which depend on the L2's first block. */
export interface OutputOracleConfig {
  /** Who may post L2 outputs. */
  proposer: string;
  /** Who may delete outputs. */
  challenger: string;
  /** L2 blocks between two outputs. */
  submissionInterval: bigint;
  /** Seconds per L2 block. */
  l2BlockTime: bigint;
  /** The L2 block the first output follows, and its timestamp (not in L1's future). */
  startingBlockNumber: bigint;
  startingTimestamp: bigint;
  /** Seconds between a withdrawal's proof and its finalization. */
  finalizationPeriodSeconds: bigint;
}

/** The L1 contracts of an OP chain, by contract name; proxied ones at their proxy address. */
export interface OpL1Contracts {
  ProxyAdmin: string;
  AddressManager: string;
  SuperchainConfig: string;
  SystemConfig: string;
  L2OutputOracle: string;
  OptimismPortal: string;
  L1CrossDomainMessenger: string;
  L1StandardBridge: string;
  L1ERC721Bridge: string;
  OptimismMintableERC20Factory: string;
}

// The default resource metering of OP chains (op-chain-ops `DefaultResourceConfig`).
const DEFAULT_RESOURCE_CONFIG = {
  maxResourceLimit: 20_000_000n,
  elasticityMultiplier: 10n,
  baseFeeMaxChangeDenominator: 8n,
  minimumBaseFee: 1_000_000_000n,
  systemTxMaxGas: 1_000_000n,
  maximumBaseFee: 2n ** 128n - 1n,
};
// Ecotone fee scalars of OP devnets; the L1 fee they set plays no part on an anvil L2.
const BASEFEE_SCALAR = 1368n;
const BLOBBASEFEE_SCALAR = 810949n;
// Where batchers post L2 data on OP devnets; nobody posts here, the address is only recorded.
const BATCH_INBOX = "0xff00000000000000000000000000000000000901";

async function deploy(deployer: Signer, name: string, args: unknown[] = []): Promise<string> {
  const contract = await opFactory(name, deployer).deploy(...args);
  await contract.waitForDeployment();
  return contract.getAddress();
}

/** Points `proxy` at a new implementation of `name` and initializes it in the same call. */
async function upgradeAndInitialize(deployer: Signer, proxyAdmin: string, proxy: string, name: string, args: unknown[]) {
  const implementation = await deploy(deployer, name);
  const data = new Contract(ZeroAddress, opArtifact(name).abi).interface.encodeFunctionData("initialize", args);
  const admin = new Contract(proxyAdmin, opArtifact("ProxyAdmin").abi, deployer);
  await (await admin.getFunction("upgradeAndCall").send(proxy, implementation, data)).wait();
}

/**
 * Deploys on L1 the contracts an OP Bedrock chain has there, from the pinned release's artifacts, the way
 * the OP deploy script lays them out: each implementation behind a `Proxy` owned by one `ProxyAdmin`
 * (owned by `deployer`), initialized through `upgradeAndCall`. Uses `OptimismPortal` (2.x) with
 * `L2OutputOracle`, which the OP SDK proves withdrawals against. The oracle's proxy is left without an
 * implementation: its starting point is the L2's first block, so `initializeOutputOracle` completes it
 * once the L2 runs (nothing reads the oracle before a withdrawal is proven).
 */
export async function deployOpL1(deployer: Signer, config: OpL1Config): Promise<OpL1Contracts> {
  const proxyAdminAddress = await deploy(deployer, "ProxyAdmin", [await deployer.getAddress()]);

  // Proxies first: the initializers refer to one another.
  const names = [
    "SuperchainConfig",
    "SystemConfig",
    "L2OutputOracle",
    "OptimismPortal",
    "L1CrossDomainMessenger",
    "L1StandardBridge",
    "L1ERC721Bridge",
    "OptimismMintableERC20Factory",
  ] as const;
  const proxies = {} as Record<(typeof names)[number], string>;
  for (const name of names) proxies[name] = await deploy(deployer, "Proxy", [proxyAdminAddress]);
  const initialize = (name: (typeof names)[number], args: unknown[]) =>
    upgradeAndInitialize(deployer, proxyAdminAddress, proxies[name], name, args);

  await initialize("SuperchainConfig", [config.admin, false]);
  await initialize("SystemConfig", [
    config.admin,
    BASEFEE_SCALAR,
    BLOBBASEFEE_SCALAR,
    zeroPadValue(config.admin, 32), // batcher hash: the batcher address, left-padded
    config.l2GasLimit,
    config.admin, // unsafe block signer
    DEFAULT_RESOURCE_CONFIG,
    BATCH_INBOX,
    {
      l1CrossDomainMessenger: proxies.L1CrossDomainMessenger,
      l1ERC721Bridge: proxies.L1ERC721Bridge,
      l1StandardBridge: proxies.L1StandardBridge,
      disputeGameFactory: ZeroAddress, // output oracle chain: no dispute games
      optimismPortal: proxies.OptimismPortal,
      optimismMintableERC20Factory: proxies.OptimismMintableERC20Factory,
      gasPayingToken: ZeroAddress, // ETH
    },
  ]);
  await initialize("OptimismPortal", [proxies.L2OutputOracle, proxies.SystemConfig, proxies.SuperchainConfig]);
  await initialize("L1CrossDomainMessenger", [proxies.SuperchainConfig, proxies.OptimismPortal, proxies.SystemConfig]);
  await initialize("L1StandardBridge", [proxies.L1CrossDomainMessenger, proxies.SuperchainConfig, proxies.SystemConfig]);
  await initialize("L1ERC721Bridge", [proxies.L1CrossDomainMessenger, proxies.SuperchainConfig]);
  await initialize("OptimismMintableERC20Factory", [proxies.L1StandardBridge]);

  // Legacy name registry the messenger was once resolved through; tools still look it up.
  const addressManagerAddress = await deploy(deployer, "AddressManager");
  const addressManager = new Contract(addressManagerAddress, opArtifact("AddressManager").abi, deployer);
  await (await addressManager.getFunction("setAddress").send("OVM_L1CrossDomainMessenger", proxies.L1CrossDomainMessenger)).wait();
  await (await addressManager.getFunction("transferOwnership").send(proxyAdminAddress)).wait();
  const proxyAdmin = new Contract(proxyAdminAddress, opArtifact("ProxyAdmin").abi, deployer);
  await (await proxyAdmin.getFunction("setAddressManager").send(addressManagerAddress)).wait();

  return { ProxyAdmin: proxyAdminAddress, AddressManager: addressManagerAddress, ...proxies };
}

/** Completes the L2OutputOracle proxy left open by `deployOpL1`; `deployer` must own the proxy admin. */
export async function initializeOutputOracle(deployer: Signer, l1: OpL1Contracts, config: OutputOracleConfig): Promise<void> {
  await upgradeAndInitialize(deployer, l1.ProxyAdmin, l1.L2OutputOracle, "L2OutputOracle", [
    config.submissionInterval,
    config.l2BlockTime,
    config.startingBlockNumber,
    config.startingTimestamp,
    config.proposer,
    config.challenger,
    config.finalizationPeriodSeconds,
  ]);
}
