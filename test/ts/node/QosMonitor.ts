import { expect } from "chai";
import { getAddress, hexlify, zeroPadValue } from "ethers";

import { SourceChain } from "@avn/protocol/constants";

import { EpochMeasurements, percentile } from "../../../src/node/monitor/measurements.ts";
import { apiRequestOf } from "../../../src/node/monitor/qos-monitor.ts";
import { solanaBytes32 } from "../../../src/devnet/demo-verify.ts";

const HOLDER = "0x1111111111111111111111111111111111111111";
const TOKEN = "0xabcdefabcdefabcdefabcdefabcdefabcdefabcd";
const MINT = "So11111111111111111111111111111111111111112";
const SOL_OWNER = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";

describe("node QoS monitor: what it asks the API, and how it sums up what it measured", function () {
  it("asks the API what a job asked: the EVM route with checksummed addresses, the Solana route in base58", function () {
    expect(apiRequestOf({ chain: SourceChain.ethereum, owner: zeroPadValue(HOLDER, 32), asset: zeroPadValue(TOKEN, 32) })).to.deep.equal({
      path: "/api/ccq-evm",
      body: { user_address: getAddress(HOLDER), contract_address: getAddress(TOKEN) },
    });
    expect(apiRequestOf({ chain: SourceChain.solana, owner: solanaBytes32(SOL_OWNER), asset: solanaBytes32(MINT) })).to.deep.equal({
      path: "/api/ccq-svm",
      body: { owner_address: SOL_OWNER, token_mint_address: MINT },
    });
    // A job whose owner word has bits above 160 is no address: the API is not asked.
    expect(
      apiRequestOf({ chain: SourceChain.ethereum, owner: hexlify(new Uint8Array(32).fill(1)), asset: zeroPadValue(TOKEN, 32) }),
    ).to.equal(undefined);
    expect(apiRequestOf({ chain: 7, owner: zeroPadValue(HOLDER, 32), asset: zeroPadValue(TOKEN, 32) })).to.equal(undefined);
  });

  it("reports nearest-rank percentiles as whole numbers within uint32, and keeps a bounded number of samples", function () {
    const hundred = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(hundred, 50)).to.equal(50);
    expect(percentile(hundred, 95)).to.equal(95);
    expect(percentile([0.2, 0.4], 50)).to.equal(1);
    expect(percentile([], 50)).to.equal(0);
    expect(percentile([2 ** 40], 50)).to.equal(2 ** 32 - 1);

    const measured = new EpochMeasurements(3);
    for (let index = 0; index < EpochMeasurements.MAX_SAMPLES + 10; index++) EpochMeasurements.add(measured.apiLatencyMs, index);
    expect(measured.apiLatencyMs).to.have.length(EpochMeasurements.MAX_SAMPLES);
    expect(measured.apiLatencyMs[0]).to.equal(10);
    measured.apiProbes = 5;
    measured.apiCorrect = 4;
    measured.apiErrors = 1;
    expect(measured.report()).to.include({ epoch: 3, apiProbes: 5, apiCorrect: 4, apiErrors: 1, evmSourceLatencyP50Ms: 0 });
  });
});
