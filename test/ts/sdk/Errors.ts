import { expect } from "chai";
import type { TransactionReceipt } from "viem";

import * as sdk from "../../../packages/sdk/src/index.ts";

const { AvnError } = sdk;

/**
 * One instance of every error class the SDK exports, keyed by the class's exported name. A class exported
 * without an entry here fails the first test: each must be checked.
 */
const SAMPLES: Record<string, () => Error> = {
  AvnError: () => new AvnError("SOME_CODE", "the base itself"),
  AvnApiError: () => new sdk.AvnApiError(404, "No token found at the given address"),
  ConditionInputError: () => new sdk.ConditionInputError("condition", "is required"),
  InvalidArgumentError: () => new sdk.InvalidArgumentError("options.retries", "options.retries must be a non-negative integer"),
  MalformedAttestationError: () => new sdk.MalformedAttestationError("message.verdict", "must be a JSON boolean"),
  NotRecordableError: () => new sdk.NotRecordableError(),
  RecordRevertedError: () =>
    new sdk.RecordRevertedError(
      `0x${"ab".repeat(32)}`,
      { blockNumber: 7n, gasUsed: 90_000n, status: "reverted" } as TransactionReceipt,
      91_000n,
    ),
  StaleAttestationError: () =>
    new sdk.StaleAttestationError({ issuedAt: 1_000n, maxRecordAge: 3_600n, latestBlockTime: 4_590n, marginSeconds: 30 }),
  TransactionRevertedError: () =>
    new sdk.TransactionRevertedError("open", `0x${"cd".repeat(32)}`, { blockNumber: 9n, status: "reverted" } as TransactionReceipt),
  UnexpectedVerifierError: () =>
    new sdk.UnexpectedVerifierError("0x00000000000000000000000000000000A77aC4e5", "0x5FbDB2315678afecb367f032bb115d0BD9f0E0a8"),
  UnsupportedRuntimeError: () => new sdk.UnsupportedRuntimeError("no JSON.parse source text access"),
  WebhookSignatureError: () => new sdk.WebhookSignatureError("mismatch", "the signature does not match the body and the secret"),
  WrongChainError: () => new sdk.WrongChainError(1n, 901n),
};

type ErrorClass = abstract new (...args: never[]) => Error;

/** Every class the SDK's index exports that is an error class, by its exported name. */
function exportedErrorClasses(): Array<[string, ErrorClass]> {
  return (Object.entries(sdk) as Array<[string, unknown]>).filter(
    (entry): entry is [string, ErrorClass] => typeof entry[1] === "function" && entry[1].prototype instanceof Error,
  );
}

describe("@avn/sdk errors: one base, a stable code, a name of its own", function () {
  it("exports AvnError and every class it throws, each with a sample here", function () {
    const names = exportedErrorClasses().map(([name]) => name);
    expect(names.sort()).to.deep.equal(Object.keys(SAMPLES).sort());
  });

  it("has every exported error class extend AvnError, named after its class, with a non-empty code", function () {
    for (const [name, errorClass] of exportedErrorClasses()) {
      const error = SAMPLES[name]();
      expect(error, name).to.be.instanceOf(errorClass).and.instanceOf(AvnError).and.instanceOf(Error);
      expect(errorClass.name, name).to.equal(name);
      expect(error.name, name).to.equal(name);
      const { code } = error as InstanceType<typeof AvnError>;
      expect(code, name)
        .to.be.a("string")
        .and.match(/^[A-Z][A-Z0-9_]*$/);
      expect(error.message, name).to.not.equal("");
    }
  });

  it("gives no two classes one name, and no two of the SDK's fixed codes one code", function () {
    const errors = exportedErrorClasses().map(([name]) => SAMPLES[name]());
    const names = errors.map((error) => error.name);
    expect(new Set(names).size).to.equal(names.length);
    // AvnApiError's code follows the HTTP status; every other class has one code of its own.
    const codes = errors
      .filter((error) => !(error instanceof sdk.AvnApiError))
      .map((error) => (error as InstanceType<typeof AvnError>).code);
    expect(new Set(codes).size).to.equal(codes.length);
  });

  it("keeps the fields a program branches on", function () {
    expect(new sdk.AvnApiError(429, "Rate limit exceeded", { retryAfter: 3 })).to.include({
      code: "RATE_LIMITED",
      status: 429,
      retryAfter: 3,
    });
    const unreachable = new sdk.AvnApiError(0, "Could not reach the API: fetch failed", { cause: new TypeError("fetch failed") });
    expect(unreachable).to.include({ code: "NETWORK", status: 0 });
    expect(unreachable.cause).to.be.instanceOf(TypeError);
    // No `cause` key unless there is one.
    expect(new sdk.AvnApiError(418, "I'm a teapot")).to.include({ code: "HTTP_418" }).and.not.have.property("cause");

    const stale = SAMPLES.StaleAttestationError() as sdk.StaleAttestationError;
    expect(stale).to.include({
      code: "STALE_ATTESTATION",
      issuedAt: 1_000n,
      maxRecordAge: 3_600n,
      latestBlockTime: 4_590n,
      marginSeconds: 30,
    });
    expect(stale.message).to.match(/^AttestationVerifier_StaleAttestation\(1000, 3600\)/);
    expect(SAMPLES.WrongChainError()).to.include({ code: "WRONG_CHAIN", walletChainId: 1n, attestationChainId: 901n });
    expect(SAMPLES.MalformedAttestationError()).to.include({ path: "message.verdict", message: "message.verdict must be a JSON boolean" });
    expect(new sdk.MalformedAttestationError("", "must be an object").message).to.equal("The attestation must be an object");
    const reverted = SAMPLES.RecordRevertedError() as sdk.RecordRevertedError;
    expect([reverted.code, reverted.gas, reverted.receipt.gasUsed]).to.deep.equal(["RECORD_REVERTED", 91_000n, 90_000n]);
  });
});
