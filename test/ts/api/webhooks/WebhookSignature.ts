import { createHmac } from "node:crypto";

import {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS,
  WEBHOOK_SIGNATURE_HEADER,
  WebhookSignatureError,
  signWebhook,
  verifyWebhook,
  webhookSignatureParts,
  type WebhookSignatureFailure,
} from "@avn/protocol/webhook-signature";
import { expect } from "chai";

const SECRET = "whsec_test_0123456789abcdef";
const BODY = '{"id":"evt_1","type":"verification.completed","data":{"wallet":"0xabc","note":"café ✓"}}';
const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z

/** The failure `verifyWebhook` reports, or null when it accepts; asserts that the message never holds the secret. */
function failureOf(...args: Parameters<typeof verifyWebhook>): WebhookSignatureFailure | null {
  try {
    verifyWebhook(...args);
    return null;
  } catch (error) {
    expect(error).to.be.instanceOf(WebhookSignatureError);
    const failure = error as WebhookSignatureError;
    expect(failure.name).to.equal("WebhookSignatureError");
    expect(failure.code).to.equal("WEBHOOK_SIGNATURE");
    expect(failure.message).to.not.include(SECRET);
    return failure.reason;
  }
}

describe("webhook signatures: Avn-Signature t=…,v1=HMAC-SHA256(secret, t.body)", function () {
  it("signs with the header name and default tolerance the issue fixes", function () {
    expect(WEBHOOK_SIGNATURE_HEADER).to.equal("Avn-Signature");
    expect(DEFAULT_WEBHOOK_TOLERANCE_SECONDS).to.equal(300);
  });

  it("matches an HMAC computed independently with node:crypto (the known vector a receiver in any language checks)", function () {
    const expected = createHmac("sha256", Buffer.from(SECRET, "utf8")).update(`${NOW}.${BODY}`, "utf8").digest("hex");
    expect(signWebhook(BODY, SECRET, NOW)).to.equal(`t=${NOW},v1=${expected}`);
    // And a literal, pinned (`printf '1.{}' | openssl dgst -sha256 -hmac secret`): the scheme cannot drift unseen.
    expect(signWebhook("{}", "secret", 1)).to.equal("t=1,v1=1122767b193110cfec322b6f199b599edbf608ed087f2d27afb0b97d99523908");
  });

  it("accepts what it signed, within the tolerance either way", function () {
    const header = signWebhook(BODY, SECRET, NOW);
    expect(failureOf(BODY, header, SECRET, 300, NOW)).to.equal(null);
    expect(failureOf(BODY, header, SECRET, 300, NOW + 300)).to.equal(null);
    expect(failureOf(BODY, header, SECRET, 300, NOW - 300)).to.equal(null);
    // The defaults: 300 s around the system clock.
    expect(failureOf(BODY, signWebhook(BODY, SECRET, Math.floor(Date.now() / 1000)), SECRET)).to.equal(null);
    expect(failureOf(BODY, signWebhook(BODY, SECRET, 1), SECRET)).to.equal("stale");
  });

  it("test_RevertWhen_BodyChangedByOneByte: a mismatch", function () {
    const header = signWebhook(BODY, SECRET, NOW);
    const bytes = Buffer.from(BODY, "utf8");
    for (const index of [0, bytes.length >> 1, bytes.length - 1]) {
      const changed = Uint8Array.from(bytes);
      changed[index] ^= 0x01;
      expect(failureOf(changed, header, SECRET, 300, NOW), `byte ${index}`).to.equal("mismatch");
    }
    expect(failureOf(`${BODY} `, header, SECRET, 300, NOW)).to.equal("mismatch");
  });

  it("test_RevertWhen_WrongSecret: a mismatch", function () {
    const header = signWebhook(BODY, SECRET, NOW);
    expect(failureOf(BODY, header, `${SECRET}x`, 300, NOW)).to.equal("mismatch");
    expect(failureOf(BODY, header, SECRET.slice(0, -1), 300, NOW)).to.equal("mismatch");
  });

  it("test_RevertWhen_TimestampTooOld or too far ahead: stale, though the MAC matches", function () {
    const header = signWebhook(BODY, SECRET, NOW);
    expect(failureOf(BODY, header, SECRET, 300, NOW + 301)).to.equal("stale");
    expect(failureOf(BODY, header, SECRET, 300, NOW - 301)).to.equal("stale");
    expect(failureOf(BODY, header, SECRET, 0, NOW + 1)).to.equal("stale");
    expect(failureOf(BODY, header, SECRET, 0, NOW)).to.equal(null);
    // A replay with a fresh t= is not stale but forged: t is inside the MAC.
    const replayed = header.replace(`t=${NOW}`, `t=${NOW + 1000}`);
    expect(failureOf(BODY, replayed, SECRET, 300, NOW + 1000)).to.equal("mismatch");
  });

  it("test_RevertWhen_HeaderMissingOrMalformed", function () {
    const mac = signWebhook(BODY, SECRET, NOW).split(",v1=")[1];
    for (const header of [undefined, null, "", "   "])
      expect(failureOf(BODY, header, SECRET, 300, NOW), String(header)).to.equal("missing");
    const malformed = [
      `v1=${mac}`, // no timestamp
      `t=${NOW}`, // no MAC
      `t=${NOW},v0=${mac}`, // only an unknown scheme
      `t=abc,v1=${mac}`,
      `t=-5,v1=${mac}`,
      `t=1.5,v1=${mac}`,
      `t=${NOW},t=${NOW},v1=${mac}`,
      `t=${NOW},v1=${mac.toUpperCase()}`,
      `t=${NOW},v1=${mac.slice(1)}`,
      `t=${NOW},v1=${mac}zz`,
      `t=${NOW};v1=${mac}`,
      "garbage",
      `=${NOW},v1=${mac}`,
    ];
    for (const header of malformed) expect(failureOf(BODY, header, SECRET, 300, NOW), header).to.equal("malformed");
  });

  it("accepts several v1 entries when one matches (secret rotation), skips unknown schemes and spaces", function () {
    const current = signWebhook(BODY, SECRET, NOW).split(",v1=")[1];
    const previous = signWebhook(BODY, "whsec_previous", NOW).split(",v1=")[1];
    const header = `t=${NOW}, v1=${previous}, v0=legacy, v2=future, v1=${current}`;
    expect(webhookSignatureParts(header)).to.deep.equal({ timestamp: NOW, signatures: [previous, current] });
    expect(failureOf(BODY, header, SECRET, 300, NOW)).to.equal(null);
    expect(failureOf(BODY, header, "whsec_previous", 300, NOW)).to.equal(null);
    expect(failureOf(BODY, `t=${NOW},v1=${previous},v1=${previous}`, SECRET, 300, NOW)).to.equal("mismatch");
  });

  it("verifies a byte body as the same UTF-8 string, and signs bytes as they are", function () {
    const bytes = new TextEncoder().encode(BODY);
    const header = signWebhook(BODY, SECRET, NOW);
    expect(failureOf(bytes, header, SECRET, 300, NOW)).to.equal(null);
    expect(signWebhook(bytes, SECRET, NOW)).to.equal(header);
    // Bytes that are not valid UTF-8 are still signed and verified exactly, never re-encoded.
    const raw = Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(failureOf(raw, signWebhook(raw, SECRET, NOW), SECRET, 300, NOW)).to.equal(null);
    expect(failureOf(Buffer.from(raw).toString("utf8"), signWebhook(raw, SECRET, NOW), SECRET, 300, NOW)).to.equal("mismatch");
  });

  it("test_RevertWhen_SecretEmpty or arguments out of range: a TypeError, not a verdict on the delivery", function () {
    const header = signWebhook(BODY, SECRET, NOW);
    expect(() => signWebhook(BODY, "", NOW)).to.throw(TypeError);
    expect(() => verifyWebhook(BODY, header, "", 300, NOW)).to.throw(TypeError);
    expect(() => signWebhook(BODY, SECRET, 1.5)).to.throw(TypeError);
    expect(() => signWebhook(BODY, SECRET, -1)).to.throw(TypeError);
    expect(() => verifyWebhook(BODY, header, SECRET, -1, NOW)).to.throw(TypeError);
    expect(() => verifyWebhook(BODY, header, SECRET, Number.NaN, NOW)).to.throw(TypeError);
  });
});
