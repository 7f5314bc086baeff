import { expect } from "chai";
import fc from "fast-check";

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
  const assertEnvelope = async (response: Response) => {
    expect(response.status, "a client error, never a 500").to.be.within(400, 499);
    const body = (await response.json()) as { status: unknown; message: unknown };
    expect(body.status).to.equal(response.status);
    expect(body.message).to.be.a("string");
  };

  for (const [path, fields] of [
    ["/api/ccq-evm", ["user_address", "contract_address"]],
    ["/api/ccq-svm", ["owner_address", "token_mint_address"]],
  ] as const) {
    it(`${path}: bodies with junk fields get a 400 with the error envelope`, async function () {
      await fc.assert(
        fc.asyncProperty(
          fc.record({ [fields[0]]: junkValue, [fields[1]]: junkValue }, { requiredKeys: [] }),
          fc.dictionary(fc.string({ maxLength: 10 }), junkValue, { maxKeys: 2 }),
          async (known, extra) => {
            const body = JSON.stringify({ ...extra, ...known });
            const response = await send(path, body, { authorization: api.apiKey, "content-type": "application/json" });
            if (response.status === 200 || response.status === 404) return; // a valid address pair can happen by chance
            await assertEnvelope(response);
          },
        ),
        { numRuns: 300 },
      );
    });

    it(`${path}: arbitrary raw bodies, content types and authorization headers get a 4xx with the envelope`, async function () {
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
            const response = await send(path, body, headers);
            await assertEnvelope(response);
          },
        ),
        { numRuns: 300 },
      );
    });
  }
});
