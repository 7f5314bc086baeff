import { getAddressDecoder } from "@solana/kit";
import { expect } from "chai";
import fc from "fast-check";
import { getAddress, hexlify } from "ethers";

import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";

/** Something a careless or hostile client might put in a field. */
const junkValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
  fc.stringMatching(/^0x[0-9a-fA-F]{0,50}$/),
  fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{0,50}$/), // base58 alphabet, any length
);

/**
 * Whether `value` is an EVM address the API accepts (docs/api.md): 0x and 40 hex digits, all lower-case,
 * all upper-case, or mixed case with a valid EIP-55 checksum.
 */
function isEvmAddress(value: unknown): value is string {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(value)) return false;
  const digits = value.slice(2);
  if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return true;
  try {
    return getAddress(value) === value;
  } catch {
    return false;
  }
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Whether `value` is a Solana address: base58 (decoded here, not by the library the API uses) of exactly 32 bytes. */
function isSolanaAddress(value: unknown): value is string {
  if (typeof value !== "string" || value === "") return false;
  let number = 0n;
  for (const char of value) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) return false;
    number = number * 58n + BigInt(digit);
  }
  const leadingZeros = value.length - value.replace(/^1+/, "").length;
  const bodyBytes = number === 0n ? 0 : Math.ceil(number.toString(16).length / 2);
  return leadingZeros + bodyBytes === 32;
}

/** `token_id` (EVM only): a decimal string of at most 78 digits, below 2^256. */
const isTokenId = (value: unknown) => typeof value === "string" && /^[0-9]{1,78}$/.test(value) && BigInt(value) < 2n ** 256n;

/** A single balance route as the property sees it: what its body may hold, and which asset holds a token. */
interface RouteModel {
  path: string;
  fields: readonly [owner: string, asset: string];
  /** Optional fields and their check. */
  optional: Readonly<Record<string, (value: unknown) => boolean>>;
  isAddress: (value: unknown) => value is string;
  /** Well-formed addresses: random ones (no token there) and the fixture's token. */
  wellFormed: fc.Arbitrary<string>;
  /** Whether `asset` (well-formed) is the fixture's token, so a 200; any other well-formed asset is a 404. */
  isToken: (asset: string) => boolean;
}

/**
 * The status the route must answer a body with (the API key is valid, the Content-Type JSON): 400 for any
 * key other than the route's fields, a missing field, or a field that is not a well-formed value (a
 * string of the right format); otherwise the address pair is looked up: 200 where the asset is a token,
 * 404 where it is not.
 */
function expectedStatus(route: RouteModel, body: Record<string, unknown>): 200 | 400 | 404 {
  const [owner, asset] = route.fields;
  for (const [key, value] of Object.entries(body)) {
    if (key === owner || key === asset) {
      if (!route.isAddress(value)) return 400;
    } else if (!Object.hasOwn(route.optional, key) || !route.optional[key](value)) return 400;
  }
  if (!Object.hasOwn(body, owner) || !Object.hasOwn(body, asset)) return 400;
  return route.isToken(body[asset] as string) ? 200 : 404;
}

describe("API: malformed input never breaks the server (property-based, fast-check)", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let api: TestApi;

  before(async function () {
    sources = await startSourceFixtures();
    api = await startTestApi(sources);
  });
  after(async function () {
    await api?.close();
    await sources?.stop();
  });

  const send = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${api.baseUrl}${path}`, { method: "POST", headers, body });
  /** The answer is `expected`, in the envelope: `{ status, message }`, and `data.asset` on a 200. */
  const assertAnswer = async (response: Response, expected: number, input: string) => {
    const text = await response.text();
    expect(response.status, `${input} answered ${text}`).to.equal(expected);
    const body = JSON.parse(text) as { status: unknown; message: unknown; data?: { asset?: { balance?: unknown } } };
    expect(body.status).to.equal(response.status);
    expect(body.message).to.be.a("string").and.not.equal("");
    if (expected === 200) expect(body.data?.asset?.balance).to.be.a("number");
  };

  const routes = (): RouteModel[] => {
    const evmToken = sources.evm.erc20;
    const randomEvm = fc
      .tuple(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.constantFrom("lower", "upper", "checksum"))
      .map(([bytes, spelling]) => {
        const digits = hexlify(bytes).slice(2);
        if (spelling === "lower") return `0x${digits}`;
        if (spelling === "upper") return `0x${digits.toUpperCase()}`;
        return getAddress(`0x${digits}`);
      });
    const randomSolana = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => getAddressDecoder().decode(bytes) as string);
    return [
      {
        path: "/api/ccq-evm",
        fields: ["user_address", "contract_address"],
        optional: { token_id: isTokenId },
        isAddress: isEvmAddress,
        wellFormed: fc.oneof(randomEvm, fc.constantFrom(evmToken, evmToken.toLowerCase())),
        isToken: (asset) => asset.toLowerCase() === evmToken.toLowerCase(),
      },
      {
        path: "/api/ccq-svm",
        fields: ["owner_address", "token_mint_address"],
        optional: {},
        isAddress: isSolanaAddress,
        wellFormed: fc.oneof(randomSolana, fc.constant(sources.svm.splMint as string)),
        isToken: (asset) => asset === sources.svm.splMint,
      },
    ];
  };

  for (const path of ["/api/ccq-evm", "/api/ccq-svm"]) {
    it(`${path}: bodies with junk fields get a 400 with the error envelope; well-formed ones are looked up (200 or 404)`, async function () {
      const route = routes().find((candidate) => candidate.path === path)!;
      const [owner, asset] = route.fields;
      const value = fc.oneof(junkValue, route.wellFormed);
      const seen = new Set<number>();
      // Each outcome at least once, whatever fast-check draws: a token, no token, an extra field, one bad field each.
      const [someOwner, someAsset] = fc.sample(
        route.wellFormed.filter((address) => !route.isToken(address)),
        2,
      );
      const token = fc.sample(route.wellFormed.filter(route.isToken), 1)[0];
      const malformed = path === "/api/ccq-evm" ? `0x${"aB".repeat(20)}` : `${"0OIl".repeat(11)}`; // a wrong EIP-55 checksum; not base58
      const examples: Array<[Record<string, unknown>, Record<string, unknown>]> = [
        [{ [owner]: someOwner, [asset]: token }, {}],
        [{ [owner]: someOwner, [asset]: someAsset }, {}],
        [{ [owner]: someOwner, [asset]: token }, { extra: 1 }],
        [{ [owner]: someOwner, [asset]: malformed }, {}],
        [{ [owner]: malformed, [asset]: token }, {}],
        [{ [owner]: someOwner }, {}],
      ];
      await fc.assert(
        fc.asyncProperty(
          fc.record({ [owner]: value, [asset]: value }, { requiredKeys: [] }),
          fc.dictionary(fc.string({ maxLength: 10 }), junkValue, { maxKeys: 2 }),
          async (known, extra) => {
            const body = JSON.stringify({ ...extra, ...known });
            const expected = expectedStatus(route, JSON.parse(body) as Record<string, unknown>);
            seen.add(expected);
            const response = await send(path, body, { authorization: api.apiKey, "content-type": "application/json" });
            await assertAnswer(response, expected, body);
          },
        ),
        { numRuns: 300, examples },
      );
      expect(
        [...seen].sort((a, b) => a - b),
        "the property met each outcome",
      ).to.deep.equal([200, 400, 404]);
    });

    it(`${path}: arbitrary raw bodies and content types get a 400 with a valid key, any other authorization a 401`, async function () {
      const seen = new Set<number>();
      await fc.assert(
        fc.asyncProperty(
          fc.string({ maxLength: 300 }),
          fc.constantFrom(
            "application/json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "application/json; charset=utf-8",
            "",
            "*/*",
          ),
          fc.oneof(
            fc.constant(api.apiKey),
            fc.constant(`Bearer ${api.apiKey}`),
            fc.string({ maxLength: 60 }).filter((value) => /^[\x20-\x7e]*$/.test(value)),
          ),
          async (body, contentType, authorization) => {
            const headers: Record<string, string> = { authorization };
            if (contentType !== "") headers["content-type"] = contentType;
            // The key is checked first (on arrival, before the body is read); a random header is never the key.
            // With it, no string of this size is a body with two well-formed addresses: a 400 (malformed JSON,
            // wrong shape, or a Content-Type other than JSON, fetch's text/plain included).
            const validKey = authorization === api.apiKey || authorization === `Bearer ${api.apiKey}`;
            const expected = validKey ? 400 : 401;
            seen.add(expected);
            const response = await send(path, body, headers);
            await assertAnswer(response, expected, `${JSON.stringify(body)} (${contentType || "no Content-Type"})`);
          },
        ),
        { numRuns: 300 },
      );
      expect(
        [...seen].sort((a, b) => a - b),
        "the property met each outcome",
      ).to.deep.equal([400, 401]);
    });
  }
});
