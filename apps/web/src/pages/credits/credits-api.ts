import { z } from "zod";
import { AvnError, httpStatusCode } from "@avn/protocol/errors";

/**
 * The credits service's HTTP answers as the Credits page reads them (`src/credits/server.ts` writes them),
 * checked with zod so that an unexpected answer is said plainly rather than shown half-read. Integers that
 * may exceed JavaScript's safe range (token amounts, ids, times on-chain) arrive as decimal strings.
 */
const decimal = z.string().regex(/^\d+$/, "a whole number as a decimal string");
const hexAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an address");

export const ITEM_KINDS = ["Transfer", "StakeFor", "NftInventory", "Mint"] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

const catalogueItem = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  description: z.string().default(""),
  priceCredits: z.number().int().positive(),
  amountPerUnit: decimal,
  maxQuantity: z.number().int().positive(),
  kind: z.enum(ITEM_KINDS),
  asset: hexAddress,
});

const catalogueSchema = z.object({
  claimsContract: hexAddress,
  chainId: decimal,
  /** What buyers pay in, lower case as Stripe writes it ("usd"). */
  currency: z.string().regex(/^[a-z]{3}$/),
  /** Credits per minor currency unit (per cent). */
  creditsPerMinorUnit: z.number().int().positive(),
  items: z.array(catalogueItem),
});

export type CatalogueItem = z.infer<typeof catalogueItem>;
export type Catalogue = z.infer<typeof catalogueSchema>;

const voucherView = z.object({
  voucher: z.object({
    recipient: hexAddress,
    itemId: decimal,
    amount: decimal,
    voucherId: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
    expiry: decimal,
  }),
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/),
  claimsContract: hexAddress,
  status: z.enum(["issued", "claimed", "expired"]),
  price: z.number().int().nonnegative(),
  quantity: z.number().int().positive(),
  requestId: z.string(),
});

export type VoucherView = z.infer<typeof voucherView>;

const accountSchema = z.object({
  account: z.string(),
  balance: z.number().int().nonnegative(),
  owed: z.number().int().nonnegative(),
  // Kinds are kept as text: a kind added to the service later is shown by its name, not refused.
  movements: z.array(z.object({ kind: z.string(), amount: z.number().int(), reference: z.string(), createdAt: z.string() })),
  vouchers: z.array(voucherView),
});

export type CreditAccount = z.infer<typeof accountSchema>;
export type Movement = CreditAccount["movements"][number];

const redemptionAnswer = voucherView.extend({ replayed: z.boolean() });
export type RedemptionAnswer = z.infer<typeof redemptionAnswer>;

const checkoutAnswer = z.object({ url: z.url({ protocol: /^https?$/ }) });

/** What `POST /credits/redemptions` takes: the request as the wallet signed it, integers as decimal strings. */
export interface RedemptionBody {
  redemption: {
    account: string;
    itemId: string;
    quantity: string;
    maxPrice: string;
    recipient: string;
    requestId: string;
    issuedAt: string;
  };
  signature: string;
}

/**
 * A failed call to the credits service: its refusal (`status` and the service's own message), a failure on
 * its side, no answer at all (`status` undefined), or an answer this page cannot read.
 */
export class CreditsServiceError extends AvnError {
  readonly status: number | undefined;
  /** Whether the service may have acted on the request although the page got no usable answer. */
  readonly mayHaveActed: boolean;

  /** `code`: the status's (`httpStatusCode`), or `UNREACHABLE` without an answer. */
  constructor(message: string, status: number | undefined, mayHaveActed: boolean, cause?: unknown) {
    super(status === undefined ? "UNREACHABLE" : httpStatusCode(status), message, { cause });
    this.name = "CreditsServiceError";
    this.status = status;
    this.mayHaveActed = mayHaveActed;
  }
}

async function call<T>(url: string, init: RequestInit, schema: z.ZodType<T>): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, cache: "no-store" });
  } catch (error) {
    // The browser says only "Failed to fetch": the service is down, unreachable, or the answer was lost.
    throw new CreditsServiceError(
      "The credits service did not answer (it may be down, or the connection was lost).",
      undefined,
      true,
      error,
    );
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const envelope = body as { status?: unknown; message?: unknown } | undefined;
    // The service's own answers carry `{status, message}`: a deliberate refusal (4xx; 501 without Stripe;
    // 502 from Stripe; 503 while the claim platform is closed), which changed nothing. Anything else of
    // 500 and above (its unexpected errors, a proxy's error page) may have come after it acted.
    const deliberate = envelope?.status === response.status && typeof envelope.message === "string" && response.status !== 500;
    const message = typeof envelope?.message === "string" ? envelope.message : `HTTP ${response.status}`;
    throw new CreditsServiceError(message, response.status, response.status >= 500 && !deliberate);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join(".") || "(answer)"} ${issue.message}`);
    throw new CreditsServiceError(
      `The credits service's answer is not what this page expects: ${problems.join("; ")}.`,
      response.status,
      true,
    );
  }
  return parsed.data;
}

const postJson = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

export function fetchCatalogue(serviceUrl: string): Promise<Catalogue> {
  return call(`${serviceUrl}/credits/catalogue`, {}, catalogueSchema);
}

/** A claim account's credits, movements and vouchers (the service brings the vouchers up to date with the chain first). */
export function fetchAccount(serviceUrl: string, wallet: string): Promise<CreditAccount> {
  return call(`${serviceUrl}/credits/accounts/${wallet}`, {}, accountSchema);
}

export function postRedemption(serviceUrl: string, body: RedemptionBody): Promise<RedemptionAnswer> {
  return call(`${serviceUrl}/credits/redemptions`, postJson(body), redemptionAnswer);
}

/** A Stripe Checkout session's URL for `credits` credits to `account`; 501 when the service has no Stripe account. */
export function postCheckout(serviceUrl: string, account: string, credits: number): Promise<{ url: string }> {
  return call(`${serviceUrl}/credits/checkout`, postJson({ account, credits }), checkoutAnswer);
}
