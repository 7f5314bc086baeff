import { expect } from "chai";
import { z } from "zod/mini";

import {
  attestationJsonSchema,
  balanceKind,
  balanceMessageSchema,
  type AttestationKind,
  type BalanceMessage,
} from "@avn/protocol/attestation-kinds";
import { attestedAnswerSchema } from "../../../src/api/attestation-hub/openapi.ts";
import { bodySchema, successSchema } from "../../../src/api/server/responses.ts";
import { evmBalanceBodySchema, evmBalanceDataSchema, type EvmBalanceData } from "@avn/protocol/balance-wire";
import {
  balanceEvidenceSchema,
  MAX_FRAME_BYTES,
  parseNodeMessage,
  signedAnswerSchema,
  withEvidence,
  type SignedAnswerOf,
} from "../../../src/common/hub-protocol.ts";

/**
 * Issue 48's bar for the one wire contract: a field added to one zod schema (a kind's message) shows in the
 * OpenAPI document, in the hub's parsing of the nodes' frames, and in the SDK's types and checks, with no
 * other edit. The kind here is the balance kind with one more field, built the way a new field would be.
 */
describe("one wire contract: a field added to a kind's zod schema shows everywhere (issue 48)", function () {
  const extendedSchema = z.extend(balanceMessageSchema, { region: z.string("must be a string") });
  type ExtendedMessage = z.infer<typeof extendedSchema>;
  const extended: AttestationKind<unknown, ExtendedMessage, "attestation"> = {
    ...(balanceKind as unknown as AttestationKind<unknown, ExtendedMessage, "attestation">),
    messageSchema: extendedSchema,
  };
  const message: BalanceMessage = {
    chain: "0",
    owner: `0x${"00".repeat(12)}${"11".repeat(20)}`,
    asset: `0x${"00".repeat(12)}${"22".repeat(20)}`,
    balance: "12345678901234567890123",
    queryResultHash: `0x${"ab".repeat(32)}`,
    sourceBlock: "42",
    issuedAt: "1764400000",
  };
  const frame = { type: "attestation", id: "r1", message, licenseIds: ["1"], signature: `0x${"11".repeat(65)}` };
  const json = {
    domain: { name: "Asset Verification Network", version: "1", chainId: 123420000418, verifyingContract: `0x${"33".repeat(20)}` },
    message,
    signatures: [{ signer: `0x${"44".repeat(20)}`, licenseIds: ["1"], signature: `0x${"11".repeat(65)}` }],
  };

  it("in /openapi.json: the schema of data.attestation.message lists it, required", function () {
    const documented = attestedAnswerSchema(extended, "An extended answer.") as unknown as {
      properties: { message: { properties: Record<string, unknown>; required: string[] } };
    };
    expect(documented.properties.message.properties.region).to.deep.equal({ type: "string" });
    expect(documented.properties.message.required).to.include("region");
    // The kind as it is has no such field: the document follows the schema, not a copy of it.
    const today = attestedAnswerSchema(balanceKind, "An answer.") as unknown as typeof documented;
    expect(today.properties.message.properties).to.not.have.property("region");
    expect(Object.keys(today.properties.message.properties)).to.deep.equal(Object.keys(message));
  });

  it("in the hub's parsing of a node's frame: kept when present, refused when missing", function () {
    const parse = signedAnswerSchema(extended, balanceEvidenceSchema);
    const parsed = parse.safeParse({ ...frame, message: { ...message, region: "eu" } });
    expect(parsed.success).to.equal(true);
    expect(parsed.data?.message.region).to.equal("eu");
    expect(parse.safeParse(frame).success).to.equal(false);
    expect(signedAnswerSchema(balanceKind, balanceEvidenceSchema).safeParse(frame).success).to.equal(true);
  });

  it("in the SDK's types and checks: the JSON type is inferred from the schema, and its check is the schema", function () {
    const schema = attestationJsonSchema(extended);
    type ExtendedJson = z.infer<typeof schema>;
    const answer: ExtendedJson = { ...json, message: { ...message, region: "eu" } };
    // @ts-expect-error the added field is required by the inferred type: a message without it does not compile
    const withoutIt: ExtendedJson = json;
    expect(schema.safeParse(answer).success).to.equal(true);
    expect(schema.safeParse(withoutIt).success).to.equal(false);
    expect(attestationJsonSchema(balanceKind).safeParse(json).success).to.equal(true);
  });

  it("a node's answer carries its evidence while the frame fits, and leaves it out when it would not", function () {
    const answer = (bytes: number): SignedAnswerOf<"attestation"> => ({
      ...(frame as SignedAnswerOf<"attestation">),
      message: { ...message, chain: "1" },
      evidence: { queryResult: "ab".repeat(bytes) },
    });
    const fits = withEvidence(answer(4_000));
    expect(fits.evidence?.queryResult).to.have.length(8_000);
    expect(parseNodeMessage(JSON.stringify(fits))).to.deep.equal(fits);
    // Solana accounts' data beyond the frame (some 8 KiB of bytes): the signature goes alone, still parseable.
    const alone = withEvidence(answer(9_000));
    expect(alone).to.not.have.property("evidence");
    expect(Buffer.byteLength(JSON.stringify(alone))).to.be.at.most(MAX_FRAME_BYTES);
    expect(parseNodeMessage(JSON.stringify(alone))).to.deep.equal(alone);
    expect(Buffer.byteLength(JSON.stringify(answer(9_000)))).to.be.above(MAX_FRAME_BYTES);
  });

  it("the balance routes too: a field added to the body or data schema is in the route schemas Fastify checks and writes with", function () {
    const body = bodySchema(z.extend(evmBalanceBodySchema, { region: z.optional(z.string()) }));
    expect(body.properties.region).to.deep.equal({ type: "string" });
    expect(body.additionalProperties).to.equal(false); // and nothing else is accepted
    const data = (schema: z.core.$ZodType) =>
      successSchema(schema, true).properties.data as { properties: Record<string, unknown>; required: string[] };
    const extendedData = data(z.extend(evmBalanceDataSchema, { region: z.string() }));
    expect(extendedData.properties.region).to.deep.equal({ type: "string" });
    expect(extendedData.required).to.include("region");
    expect(data(evmBalanceDataSchema).properties).to.not.have.property("region");
    // A JSON integer is one {"type": "integer"}: the serializer writes a bigint exactly, above 2^53 too.
    expect((extendedData.properties.asset as { properties: { balance: unknown } }).properties.balance).to.deep.equal({ type: "integer" });
    // The SDK's type of data is the schema's inference (a bigint balance fits it).
    const answer: EvmBalanceData = { user_address: "0x", asset: { balance: 2n ** 70n, QueryResult: "0x" } };
    expect(answer.asset.balance).to.equal(2n ** 70n);
  });
});
