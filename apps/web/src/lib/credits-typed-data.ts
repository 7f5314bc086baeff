// The credits channel's signed messages as the credits service defines them (viem only), bundled as they
// are: the page signs the `CreditRedemption` the service verifies, under the same domain, and reads vouchers
// as the service writes them. The build's freshness check watches that file too (`src/web/web-build.ts`).
export * from "../../../../src/credits/typed-data.ts";
