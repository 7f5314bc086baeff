import { getAddress, isAddress, isHexString } from "ethers";
import { z } from "zod";

import { listenHost, logLevel, port, rpcUrl, serviceUrl } from "../common/config-fields.ts";
import { redactConfig, secret } from "../common/config-redaction.ts";
import { commaSeparated, parseEnvironment } from "../common/environment.ts";

const evmAddress = z
  .string()
  .refine((value) => isAddress(value), "not an EVM address")
  .transform((value) => getAddress(value));

/** A Stripe API key and its mode. */
const STRIPE_KEY_SHAPE = /^[sr]k_(test|live)_./;

const schema = z.object({
  CREDITS_HOST: listenHost(),
  CREDITS_PORT: port().default(8789),
  /** The ledger: a SQLite file. */
  CREDITS_DB: z.string().min(1).default(".data/credits.sqlite"),
  /** The signing secret of the Stripe endpoint that sends the webhooks (`whsec_…`). */
  STRIPE_WEBHOOK_SECRET: secret(z.string().min(1)),
  /** How old a webhook's signed timestamp may be, in seconds (Stripe's library default: 300). */
  STRIPE_WEBHOOK_TOLERANCE_SECONDS: z.coerce.number().int().positive().max(3_600).default(300),
  /**
   * A Stripe secret or restricted key (`sk_test_…`, `sk_live_…`, `rk_…`): to open Checkout sessions (unset,
   * buyers are sent elsewhere to pay); its mode is the webhook's when STRIPE_MODE is unset.
   */
  STRIPE_SECRET_KEY: secret(z.string().regex(STRIPE_KEY_SHAPE, "a Stripe key (sk_test_…, sk_live_…, rk_test_…, rk_live_…)")).optional(),
  /**
   * The Stripe mode the webhook takes events from (`test` or `live`): an event of the other mode is refused.
   * Unset, the secret key's mode; without a key, test.
   */
  STRIPE_MODE: z.enum(["test", "live"]).optional(),
  /** Where Checkout sends buyers back (the web app's Credits page, say). */
  CREDITS_CHECKOUT_RETURN_URL: serviceUrl(/^https?$/).optional(),
  /** The currency buyers pay in (ISO code, lower case as Stripe writes it). */
  CREDITS_CURRENCY: z
    .string()
    .regex(/^[a-z]{3}$/, "a three-letter currency code in lower case")
    .default("usd"),
  /** Credits per minor currency unit (per cent): 1 makes a credit cost 1 cent. */
  CREDITS_PER_MINOR_UNIT: z.coerce.number().int().positive().max(1_000_000).default(1),
  /** The operator's catalogue: a JSON file of items priced in credits. */
  CREDITS_CATALOGUE: z.string().min(1),
  /** The issuer key that signs vouchers (`0x` + 64 hex digits): a secret. */
  CREDITS_ISSUER_KEY: secret(z.string().refine((value) => isHexString(value, 32), "a 32-byte private key in hex (0x…)")),
  CREDITS_L2_RPC_URL: rpcUrl(),
  CREDITS_CLAIMS_CONTRACT: evmAddress,
  /** How long a voucher may be claimed, in seconds; its credits come back after that if it was not. */
  VOUCHER_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(90 * 86_400)
    .default(7 * 86_400),
  /** How far a redemption request's time may be from the service's, in seconds. */
  REDEMPTION_MAX_SKEW_SECONDS: z.coerce.number().int().min(10).max(3_600).default(600),
  /** Web origins allowed to call the service from a browser (comma-separated; none by default; `*` any). */
  CREDITS_ALLOWED_ORIGINS: commaSeparated().default([]),
  LOG_LEVEL: logLevel(),
});

export type CreditsConfig = Readonly<z.infer<typeof schema>>;

/**
 * Parses the credits service's configuration from the environment once; the result is frozen. A
 * STRIPE_MODE that contradicts the secret key's mode is refused (one of the two is a mistake).
 */
export function loadCreditsConfig(env: NodeJS.ProcessEnv): CreditsConfig {
  const config = parseEnvironment(schema, env, "credits configuration");
  const keyMode = stripeKeyMode(config.STRIPE_SECRET_KEY);
  if (config.STRIPE_MODE !== undefined && keyMode !== undefined && config.STRIPE_MODE !== keyMode) {
    throw new Error(`invalid credits configuration:\n  STRIPE_MODE: ${config.STRIPE_MODE}, but STRIPE_SECRET_KEY is a ${keyMode}-mode key`);
  }
  return config;
}

/** Whether the webhook takes live-mode events (else test-mode ones): STRIPE_MODE, else the secret key's mode, else test. */
export function stripeLivemode(config: CreditsConfig): boolean {
  return (config.STRIPE_MODE ?? stripeKeyMode(config.STRIPE_SECRET_KEY) ?? "test") === "live";
}

function stripeKeyMode(key: string | undefined): "test" | "live" | undefined {
  if (key === undefined) return undefined;
  return STRIPE_KEY_SHAPE.exec(key)?.[1] as "test" | "live" | undefined;
}

/** The configuration as it may be logged: secrets as `<set>`, URLs by their origin. */
export function redactedCreditsConfig(config: CreditsConfig): Record<string, unknown> {
  return redactConfig(schema, config);
}
