// `npm run credits`: the credits service (Stripe webhooks, the ledger, redemptions into vouchers),
// configured by the environment (docs/credits.md). Logic lives in src/credits/.
import { loadCreditsConfig } from "../src/credits/config.ts";
import { startCreditsService } from "../src/credits/main.ts";

const service = await startCreditsService(loadCreditsConfig(process.env));
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
