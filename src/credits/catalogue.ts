import { readFile } from "node:fs/promises";

import { getAddress, isAddress } from "ethers";
import { z } from "zod";

import { ITEM_KINDS } from "@avn/protocol/constants";

export { ITEM_KINDS };
export type ItemKind = Exclude<(typeof ITEM_KINDS)[number], "None">;

const item = z.object({
  /** The claim contract's item id. */
  id: z.number().int().positive(),
  name: z.string().min(1).max(80),
  description: z.string().max(500).default(""),
  /** Credits per unit. */
  priceCredits: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  /** What one unit delivers: base units (tokens) or a count (NFTs, minted items), as a decimal string. */
  amountPerUnit: z.string().regex(/^[1-9]\d*$/, "a positive whole number, as a string"),
  /** Units one redemption may ask for. */
  maxQuantity: z.number().int().positive().max(20).default(10),
  kind: z.enum(["Transfer", "StakeFor", "NftInventory", "Mint"]),
  asset: z
    .string()
    .refine((value) => isAddress(value), "not an EVM address")
    .transform((value) => getAddress(value)),
});

const catalogue = z.object({ items: z.array(item).min(1) }).superRefine((value, context) => {
  const ids = new Set<number>();
  for (const [index, entry] of value.items.entries()) {
    if (ids.has(entry.id)) context.addIssue({ code: "custom", path: ["items", index, "id"], message: `item id ${entry.id} appears twice` });
    ids.add(entry.id);
    // A voucher carries at most 20 ERC-721 tokens or minted items (VoucherClaims.MAX_TOKENS_PER_VOUCHER).
    if ((entry.kind === "NftInventory" || entry.kind === "Mint") && BigInt(entry.amountPerUnit) * BigInt(entry.maxQuantity) > 20n) {
      context.addIssue({
        code: "custom",
        path: ["items", index, "maxQuantity"],
        message: "a voucher carries at most 20 tokens: lower amountPerUnit × maxQuantity",
      });
    }
  }
});

export type CatalogueItem = z.infer<typeof item>;
export type Catalogue = z.infer<typeof catalogue>;

/** Reads and checks the operator's catalogue file (every problem listed at once). */
export async function loadCatalogue(file: string): Promise<Catalogue> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`the catalogue ${file} cannot be read as JSON: ${(error as Error).message.split("\n")[0]}`, { cause: error });
  }
  return parseCatalogue(json, file);
}

export function parseCatalogue(json: unknown, where = "the catalogue"): Catalogue {
  const parsed = catalogue.safeParse(json);
  if (!parsed.success)
    throw new Error(`invalid ${where}:\n  ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("\n  ")}`);
  return parsed.data;
}
