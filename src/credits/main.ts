import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import Stripe from "stripe";
import type { Address } from "viem";

import { loadCatalogue } from "./catalogue.ts";
import { ClaimsChain } from "./claims-chain.ts";
import { redactedCreditsConfig, stripeLivemode, type CreditsConfig } from "./config.ts";
import { connectCreditsDatabase } from "./database.ts";
import { VoucherIssuer } from "./issuer.ts";
import { Ledger } from "./ledger.ts";
import { buildCreditsServer } from "./server.ts";

export interface RunningCreditsService {
  app: FastifyInstance;
  url: string;
  ledger: Ledger;
  /** Stops accepting requests, finishes those in flight, then closes the ledger and the chain reader. */
  close(): Promise<void>;
}

/**
 * Wires the credits service from its configuration: the ledger (migrated), the catalogue (checked against
 * the claim contract: a voucher for an item the contract delivers otherwise would fail), the issuer key
 * (warned about when the contract expects another), Stripe when a secret key is set, and the server.
 */
export async function startCreditsService(config: CreditsConfig): Promise<RunningCreditsService> {
  const log = pino({ level: config.LOG_LEVEL }).child({ component: "credits" });
  log.info({ config: redactedCreditsConfig(config) }, "starting the credits service");
  const catalogue = await loadCatalogue(config.CREDITS_CATALOGUE);
  const chain = new ClaimsChain(config.CREDITS_L2_RPC_URL, config.CREDITS_CLAIMS_CONTRACT);
  const { db } = await connectCreditsDatabase(config.CREDITS_DB);
  try {
    const chainId = await chain.chainId();
    const mismatched = await chain.mismatchedItems(catalogue);
    if (mismatched.length > 0) throw new Error(`the catalogue does not match the claim contract:\n  ${mismatched.join("\n  ")}`);
    const issuer = new VoucherIssuer(config.CREDITS_ISSUER_KEY, chainId, config.CREDITS_CLAIMS_CONTRACT as Address);
    const ledger = new Ledger(db);
    const elsewhere = await ledger.vouchers.outstandingElsewhere(config.CREDITS_CLAIMS_CONTRACT, chainId);
    if (elsewhere.length > 0) {
      // Their settlement would read the wrong contract: a claim there would never be seen, an expiry refund would pay twice.
      throw new Error(
        `the ledger holds vouchers still out on another claim contract (${elsewhere.join(", ")}): point the service at that contract until they are settled, or use a new ledger`,
      );
    }
    const status = await chain.status();
    if (status.issuer.toLowerCase() !== issuer.address.toLowerCase() || status.paused) {
      log.warn(
        { issuer: issuer.address, onChainIssuer: status.issuer, paused: status.paused },
        "the claim contract is paused or expects another issuer key: redemptions are refused until that changes",
      );
    }
    const stripe = config.STRIPE_SECRET_KEY === undefined ? undefined : new Stripe(config.STRIPE_SECRET_KEY);
    const app = await buildCreditsServer({ config, ledger, catalogue, issuer, chain, chainId, stripe, log });
    const address = await app.listen({ host: config.CREDITS_HOST, port: config.CREDITS_PORT });
    log.info({ url: address, issuer: issuer.address, stripeMode: stripeLivemode(config) ? "live" : "test" }, "credits service listening");
    let closing: Promise<void> | undefined;
    return {
      app,
      url: address,
      ledger,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await db.destroy();
          chain.destroy();
        })()),
    };
  } catch (error) {
    await db.destroy();
    chain.destroy();
    throw error;
  }
}
