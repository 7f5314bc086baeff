import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { Wallet } from "ethers";
import hre from "hardhat";

import { loadCreditsConfig } from "../../src/credits/config.ts";
import { startCreditsService, type RunningCreditsService } from "../../src/credits/main.ts";
import { deployTokenPair } from "../../src/deploy/contracts.ts";
import { startAnvil } from "../../src/devnet/anvil.ts";
import { E18 } from "@avn/protocol/units";

/** The webhook signing secret of these tests' "Stripe endpoint" (a test value, like Stripe's own test mode ones). */
export const TEST_WEBHOOK_SECRET = "whsec_test_credits_service";
export const PRIMARY_ITEM = 1;

/**
 * The credits service over a chain of its own (anvil) with a VoucherClaims contract that sells item 1,
 * 10 primary tokens per unit for 1,000 credits, from an inventory of 10,000 primary tokens; its ledger in
 * a temporary folder. `env` overrides the service's settings.
 */
export async function startCreditsFixture(env: Record<string, string> = {}) {
  const dir = await mkdtemp(path.join(tmpdir(), "credits-"));
  const anvil = await startAnvil({ chainId: 900, disableCodeSizeLimit: hre.globalOptions.coverage });
  const connection = await hre.network.create({ network: "devnetL1", override: { url: anvil.rpcUrl } });
  const { ethers } = connection;
  const [admin, operator] = await ethers.getSigners();
  const issuer = Wallet.createRandom();
  const { primary } = await deployTokenPair(connection, {
    supplyRecipient: operator.address,
    admin: admin.address,
    forfeitRecipient: admin.address,
  });
  const claims = await ethers.deployContract("VoucherClaims", [issuer.address, operator.address, admin.address, 0n]);
  const claimsAddress = await claims.getAddress();
  await (await claims.connect(operator).setItem(PRIMARY_ITEM, { kind: 1, asset: await primary.getAddress() })).wait();
  await (await primary.connect(operator).transfer(claimsAddress, 10_000n * E18)).wait();
  const catalogue = path.join(dir, "catalogue.json");
  await writeFile(
    catalogue,
    JSON.stringify({
      items: [
        {
          id: PRIMARY_ITEM,
          name: "10 primary tokens",
          priceCredits: 1_000,
          amountPerUnit: (10n * E18).toString(),
          maxQuantity: 5,
          kind: "Transfer",
          asset: await primary.getAddress(),
        },
      ],
    }),
  );
  let ledgers = 0;
  /** The environment of a credits service on the same contract and catalogue, with a fresh ledger of its own (`env` overrides). */
  const serviceEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
    CREDITS_PORT: "0",
    CREDITS_DB: path.join(dir, `credits-${ledgers++}.sqlite`),
    STRIPE_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    CREDITS_CATALOGUE: catalogue,
    CREDITS_ISSUER_KEY: issuer.privateKey,
    CREDITS_L2_RPC_URL: anvil.rpcUrl,
    CREDITS_CLAIMS_CONTRACT: claimsAddress,
    LOG_LEVEL: "silent",
    ...env,
    ...overrides,
  });
  /** Another credits service, in this process (see `serviceEnv`). */
  const startService = (overrides: Record<string, string> = {}): Promise<RunningCreditsService> =>
    startCreditsService(loadCreditsConfig(serviceEnv(overrides)));
  const service = await startService();
  return {
    anvil,
    ethers,
    primary,
    claims,
    issuer,
    service,
    serviceEnv,
    startService,
    operator,
    admin,
    dir,
    catalogue,
    webhookUrl: `${service.url}/credits/webhooks/stripe`,
    async stop() {
      await service.close();
      await connection.close();
      await anvil.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
export type CreditsFixture = Awaited<ReturnType<typeof startCreditsFixture>>;
