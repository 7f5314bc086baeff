import { pad, parseEventLogs, type Abi, type Hex, type Log } from "viem";
import { describe, expect, it } from "vitest";

import { verificationRegistryAbi } from "../src/generated/abis";
import { base58, chainKind, subjectText } from "../src/pages/network/encoding";
import { foldJobLogs, JOB_WINDOW, unseenLogs, type JobRow, type RegistryLog } from "../src/pages/network/job-logs";
import { encodedLog } from "./encoded-log";
import { address } from "./governance-fixtures";

const ABI: Abi = verificationRegistryAbi;
const REGISTRY = address(0x54);
const REQUESTER = address(0xc0);
const OPERATOR = address(0x0b);
/** An EVM owner and asset as the registry stores them: addresses left-padded to 32 bytes. */
const OWNER = pad(address(0x0a).toLowerCase() as Hex);
const ASSET = pad(address(0xa5).toLowerCase() as Hex);

let nextIndex = 0;
/** One registry event as a node would return it. */
const emit = (eventName: string, args: Record<string, unknown>): Log =>
  encodedLog(ABI, eventName, args, { address: REGISTRY, logIndex: nextIndex++ });
/**
 * Logs decoded as the page's subscription decodes them (strict, by the registry's ABI). viem types
 * `parseEventLogs`'s answer apart from the watcher's logs, which hold the same fields.
 */
const decode = (logs: Log[]) => parseEventLogs({ abi: verificationRegistryAbi, logs, strict: true }) as unknown as RegistryLog[];

const requested = (jobId: bigint) =>
  emit("VerificationRequested", { jobId, requester: REQUESTER, chain: 0, owner: OWNER, asset: ASSET, fee: 10n });
const vote = (jobId: bigint, licenseId: bigint) =>
  emit("VoteSubmitted", { jobId, licenseId, operator: OPERATOR, resultHash: pad("0x01"), sourceBlock: 100n });
const fulfilled = (jobId: bigint, balance: bigint) =>
  emit("VerificationFulfilled", { jobId, chain: 0, owner: OWNER, asset: ASSET, balance, queryResultHash: pad("0x02"), sourceBlock: 100n });
const expired = (jobId: bigint) => emit("JobExpired", { jobId, requester: REQUESTER, refundedFee: 10n });

const fold = (logs: Log[], firstId = 0n, previous: ReadonlyMap<bigint, JobRow> = new Map()) => foldJobLogs(previous, decode(logs), firstId);

describe("the jobs table from the registry's encoded events", () => {
  it("decodes a request, its votes and its result into one row", () => {
    const jobs = fold([requested(7n), vote(7n, 1n), vote(7n, 2n), fulfilled(7n, 123_456n)]);
    expect([...jobs.values()]).toEqual([
      { id: 7n, chain: 0, owner: OWNER, asset: ASSET, status: "fulfilled", balance: 123_456n, votes: 2 },
    ]);
    expect(subjectText(0, jobs.get(7n)!.owner!)).toBe(address(0x0a));
  });

  it("reaches the same rows whatever order the history and the live events arrive in", () => {
    const logs = [requested(1n), vote(1n, 1n), requested(2n), vote(1n, 3n), fulfilled(1n, 5n), expired(2n)];
    const forwards = fold(logs);
    expect(fold([...logs].reverse())).toEqual(forwards);
    expect(forwards.get(2n)).toEqual({ id: 2n, chain: 0, owner: OWNER, asset: ASSET, status: "expired", votes: 0 });
    // A row folded from part of the logs, then the rest: the same.
    expect(fold(logs.slice(3), 0n, fold(logs.slice(0, 3)))).toEqual(forwards);
  });

  it("opens no row for a late event of a job older than the window, but updates one it shows", () => {
    const shown = fold([requested(5n)], 5n);
    const later = fold([vote(4n, 1n), vote(5n, 1n)], 5n, shown);
    expect([...later.keys()]).toEqual([5n]);
    expect(later.get(5n)?.votes).toBe(1);
    // The previous rows are not changed in place (React compares them).
    expect(shown.get(5n)?.votes).toBe(0);
  });

  it("keeps the newest JOB_WINDOW jobs", () => {
    const count = BigInt(JOB_WINDOW) + 1n;
    const jobs = fold(Array.from({ length: Number(count) }, (_, index) => requested(BigInt(index) + 1n)));
    expect(jobs.size).toBe(JOB_WINDOW);
    expect(jobs.has(1n)).toBe(false);
    expect(jobs.has(count)).toBe(true);
  });

  it("skips a log seen before, by transaction and log index", () => {
    const seen = new Set<string>();
    const [first, second] = decode([requested(1n), vote(1n, 1n)]);
    expect(unseenLogs(seen, [first])).toEqual([first]);
    expect(unseenLogs(seen, [first, second])).toEqual([second]);
    expect(unseenLogs(seen, [second, first])).toEqual([]);
  });
});

describe("subjects in their chain's usual form", () => {
  it("writes Solana keys in base58, each leading zero byte as a 1", () => {
    expect(base58(pad("0x00"))).toBe("1".repeat(32));
    expect(base58(pad("0x01"))).toBe(`${"1".repeat(31)}2`);
    // The SPL token program and wrapped SOL, as explorers show them.
    expect(base58("0x06ddf6e1d765a193d9cbe146ceeb79ac1cb485ed5f5b37913a8cf5857eff00a9")).toBe(
      "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
    );
    expect(subjectText(1, "0x069b8857feab8184fb687f634618c035dac439dc1aeb3b5598a0f00000000001")).toBe(
      "So11111111111111111111111111111111111111112",
    );
  });

  it("writes EVM subjects as checksummed addresses and unknown chains' as they are", () => {
    const padded: Hex = `0x${"0".repeat(24)}${address(0xab).slice(2).toLowerCase()}`;
    expect(subjectText(0, padded)).toBe(address(0xab));
    expect(subjectText(9, padded)).toBe(padded);
    expect([chainKind(0), chainKind(1), chainKind(9)]).toEqual(["EVM", "Solana", "Chain 9"]);
  });
});
