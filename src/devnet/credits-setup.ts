import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";

import { ContractFactory, NonceManager, Wallet, type Provider } from "ethers";
import hre from "hardhat";

import { NodeLicense__factory, PrimaryToken__factory, VoucherClaims__factory } from "../../typechain-types/index.ts";
import { ITEM_KINDS, type Catalogue } from "../credits/catalogue.ts";
import { loadCreditsConfig } from "../credits/config.ts";
import { startCreditsService, type RunningCreditsService } from "../credits/main.ts";
import type { DevAccount } from "../common/stack-file.ts";
import { eventArgs } from "./events.ts";
import { bridgePrimaryTokens } from "./network-setup.ts";
import { E18 } from "@avn/protocol/units";

/** The claim platform's inventory of primary tokens (sold as they are, or staked for the buyer), bridged from L1. */
export const CLAIMS_PRIMARY_INVENTORY = 200_000n * E18;
/** Node licenses the operator buys into the inventory. */
export const CLAIMS_LICENSE_INVENTORY = 3n;
/** What the operator bridges for itself to buy those licenses. */
const OPERATOR_TOKENS = 20_000n * E18;

/** The demo catalogue's item ids (the claim contract's). */
export const CREDIT_ITEMS = { primary: 1, staked: 2, license: 3, gameItem: 4 } as const;

/**
 * Deploys the credits channel's claim platform (`VoucherClaims`) with `issuer` as its voucher key; the
 * deployer is its operator and admin on the devnet (a studio would name a multisig). Deployed before the
 * example game, which lets it mint bought items.
 */
export async function deployClaimPlatform(l2: Provider, deployer: DevAccount, issuer: string): Promise<string> {
  const artifact = await hre.artifacts.readArtifact("VoucherClaims");
  const signer = new NonceManager(new Wallet(deployer.privateKey, l2));
  const claims = await new ContractFactory(artifact.abi, artifact.bytecode, signer).deploy(issuer, deployer.address, deployer.address, 0n);
  await claims.waitForDeployment();
  return claims.getAddress();
}

export interface CreditsChannelInput {
  workDir: string;
  l1: Provider;
  l2: Provider;
  l2RpcUrl: string;
  deployer: DevAccount;
  contracts: {
    l1PrimaryToken: string;
    l1StandardBridge: string;
    l2: { PrimaryToken: string; StakedToken: string; NodeLicense: string; GameItem: string; VoucherClaims: string };
  };
  /** The issuer key the claim platform was deployed with: a secret, kept in this process. */
  issuerKey: string;
  port: number;
  onProgress: (line: string) => void;
}

export interface CreditsChannel {
  service: RunningCreditsService;
  catalogue: Catalogue;
  /** What the stack file names: where the service is, and the webhook's (local, generated) secret. */
  stack: { url: string; webhookUrl: string; webhookSecret: string };
}

/**
 * The credits channel on the local network: the operator stocks the claim platform (primary tokens
 * bridged from L1 to it, node licenses it buys and sends in), defines the demo catalogue's four items
 * there and in a catalogue file, and the credits service starts with a generated webhook secret.
 */
export async function startCreditsChannel(input: CreditsChannelInput): Promise<CreditsChannel> {
  const { contracts, onProgress } = input;
  await rm(input.workDir, { recursive: true, force: true });
  await mkdir(input.workDir, { recursive: true });
  const claimsAddress = contracts.l2.VoucherClaims;
  onProgress("Stocking the credits channel's claim platform: primary tokens bridged to it, node licenses bought into it…");
  await bridgePrimaryTokens({ ...input, contracts }, [
    { to: claimsAddress, amount: CLAIMS_PRIMARY_INVENTORY },
    { to: input.deployer.address, amount: OPERATOR_TOKENS },
  ]);
  const operator = new NonceManager(new Wallet(input.deployer.privateKey, input.l2));
  const license = NodeLicense__factory.connect(contracts.l2.NodeLicense, operator);
  const price = await license.quote(CLAIMS_LICENSE_INVENTORY);
  await (await PrimaryToken__factory.connect(contracts.l2.PrimaryToken, operator).approve(contracts.l2.NodeLicense, price)).wait();
  const firstId = eventArgs(await (await license.buy(CLAIMS_LICENSE_INVENTORY, price)).wait(), "LicensesPurchased").firstId as bigint;
  for (let id = firstId; id < firstId + CLAIMS_LICENSE_INVENTORY; id++) {
    await (await license["safeTransferFrom(address,address,uint256)"](input.deployer.address, claimsAddress, id)).wait();
  }

  const catalogue: Catalogue = {
    items: [
      {
        id: CREDIT_ITEMS.primary,
        name: "100 primary tokens",
        description: "Verification Network tokens, on the L2",
        priceCredits: 1_000,
        amountPerUnit: (100n * E18).toString(),
        maxQuantity: 10,
        kind: "Transfer",
        asset: contracts.l2.PrimaryToken,
      },
      {
        id: CREDIT_ITEMS.staked,
        name: "100 staked tokens",
        description: "Staked tokens: verification collateral, or redeemed after an unlock period",
        priceCredits: 1_000,
        amountPerUnit: (100n * E18).toString(),
        maxQuantity: 10,
        kind: "StakeFor",
        asset: contracts.l2.StakedToken,
      },
      {
        id: CREDIT_ITEMS.license,
        name: "Node license",
        description: "The right to run a circuit node",
        priceCredits: 100_000,
        amountPerUnit: "1",
        maxQuantity: 1,
        kind: "NftInventory",
        asset: contracts.l2.NodeLicense,
      },
      {
        id: CREDIT_ITEMS.gameItem,
        name: "Game item",
        description: "The example game's item, minted to you",
        priceCredits: 500,
        amountPerUnit: "1",
        maxQuantity: 5,
        kind: "Mint",
        asset: contracts.l2.GameItem,
      },
    ],
  };
  const claims = VoucherClaims__factory.connect(claimsAddress, operator);
  for (const item of catalogue.items)
    await (await claims.setItem(item.id, { kind: ITEM_KINDS.indexOf(item.kind), asset: item.asset })).wait();
  const catalogueFile = path.join(input.workDir, "catalogue.json");
  await writeFile(catalogueFile, `${JSON.stringify(catalogue, null, 2)}\n`);

  onProgress("Starting the credits service (Stripe webhooks, the ledger, vouchers)…");
  const webhookSecret = `whsec_local_${randomBytes(24).toString("hex")}`;
  const service = await startCreditsService(
    loadCreditsConfig({
      CREDITS_PORT: String(input.port),
      CREDITS_DB: path.join(input.workDir, "credits.sqlite"),
      STRIPE_WEBHOOK_SECRET: webhookSecret,
      CREDITS_CATALOGUE: catalogueFile,
      CREDITS_ISSUER_KEY: input.issuerKey,
      CREDITS_L2_RPC_URL: input.l2RpcUrl,
      CREDITS_CLAIMS_CONTRACT: claimsAddress,
      // Local only: the web app is served from another port, and every answer is public or signed.
      CREDITS_ALLOWED_ORIGINS: "*",
      LOG_LEVEL: "warn",
    }),
  );
  return { service, catalogue, stack: { url: service.url, webhookUrl: `${service.url}/credits/webhooks/stripe`, webhookSecret } };
}
