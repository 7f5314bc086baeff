import { expect } from "chai";

import { RedisRateLimitStore } from "../../../src/api/rate-limit/redis-store.ts";
import { MemoryRateLimitStore, rateLimitHeaders } from "../../../src/api/rate-limit/token-bucket.ts";
import { REDIS, startRedis } from "../../helpers/redis.ts";
import { requireService } from "../../helpers/services.ts";

describe("API rate limits: token buckets per key", function () {
  this.timeout(30_000);

  it("lets a full bucket's burst through, refuses the next request until a token refills, per key", async function () {
    let now = 1_000_000;
    const policy = { capacity: 3, refillPerSecond: 2 };
    const store = new MemoryRateLimitStore(policy, () => now);
    try {
      for (let i = 0; i < 3; i += 1) expect((await store.take("a")).allowed).to.equal(true);
      const refused = await store.take("a");
      expect(refused).to.deep.equal({ allowed: false, granted: 0, limit: 3, remaining: 0, retryAfterMs: 500, resetMs: 1_500 });
      expect(rateLimitHeaders(refused, policy)).to.deep.equal({
        "RateLimit-Limit": "3",
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": "2",
        "RateLimit-Policy": "3;w=2",
        "Retry-After": "1",
      });
      expect((await store.take("b")).allowed).to.equal(true); // another key has its own bucket
      now += 499;
      expect((await store.take("a")).allowed).to.equal(false);
      now += 1;
      expect((await store.take("a")).allowed).to.equal(true);
      now += 60_000; // never more than a full bucket
      const full = await store.take("a");
      expect(full.remaining).to.equal(2);
    } finally {
      await store.close();
    }
  });

  it("takes up to n tokens at once: as many as the bucket holds, never more", async function () {
    let now = 1_000_000;
    const policy = { capacity: 5, refillPerSecond: 2 };
    const store = new MemoryRateLimitStore(policy, () => now);
    try {
      expect(await store.take("a", 3)).to.deep.equal({
        allowed: true,
        granted: 3,
        limit: 5,
        remaining: 2,
        retryAfterMs: 0,
        resetMs: 1_500,
      });
      const partial = await store.take("a", 4);
      expect(partial).to.deep.equal({ allowed: true, granted: 2, limit: 5, remaining: 0, retryAfterMs: 0, resetMs: 2_500 });
      expect(rateLimitHeaders(partial, policy)).to.not.have.property("Retry-After");
      now += 1_250; // 2.5 tokens back: 2 can be taken, half a token stays
      expect(await store.take("a", 100)).to.include({ allowed: true, granted: 2, remaining: 0 });
      const refused = await store.take("a", 2);
      expect(refused).to.include({ allowed: false, granted: 0, remaining: 0, retryAfterMs: 250 });
      expect((await store.take("a")).allowed, "take(key) is take-up-to-1").to.equal(false);
      for (const count of [0, -1, 1.5, Number.NaN]) {
        let thrown: unknown;
        await store.take("a", count).catch((error: unknown) => (thrown = error));
        expect(thrown, String(count)).to.be.instanceOf(RangeError);
      }
    } finally {
      await store.close();
    }
  });

  it("takes n tokens all or nothing: none of them when the bucket holds fewer, with the wait until it holds them all", async function () {
    let now = 1_000_000;
    const policy = { capacity: 5, refillPerSecond: 2 };
    const store = new MemoryRateLimitStore(policy, () => now);
    try {
      expect(await store.take("a", 3, "all")).to.include({ allowed: true, granted: 3, remaining: 2 });
      // 2 left, 4 asked: none taken, 2 more needed at 2 a second.
      const refused = await store.take("a", 4, "all");
      expect(refused).to.deep.equal({ allowed: false, granted: 0, limit: 5, remaining: 2, retryAfterMs: 1_000, resetMs: 1_500 });
      expect(rateLimitHeaders(refused, policy)).to.include({ "Retry-After": "1", "RateLimit-Remaining": "2" });
      now += 1_000;
      expect(await store.take("a", 4, "all")).to.include({ allowed: true, granted: 4, remaining: 0 });
      // More than the bucket ever holds: refused, and the wait is for a full bucket at most.
      expect(await store.take("a", 6, "all")).to.include({ allowed: false, granted: 0, retryAfterMs: 2_500 });
      let thrown: unknown;
      await store.take("a", 1, "most" as "all").catch((error: unknown) => (thrown = error));
      expect(thrown).to.be.instanceOf(RangeError);
    } finally {
      await store.close();
    }
  });

  it("shares one bucket per key between API processes through a real redis-server", async function () {
    const redis = await startRedis();
    if (redis === undefined) requireService(this, REDIS);
    const policy = { capacity: 5, refillPerSecond: 0.01 };
    const [first, second] = await Promise.all([
      RedisRateLimitStore.connect(redis.url, policy),
      RedisRateLimitStore.connect(redis.url, policy),
    ]);
    try {
      const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? first : second).take("shared")));
      expect(decisions.filter((decision) => decision.allowed)).to.have.length(5);
      const refused = decisions.find((decision) => !decision.allowed)!;
      expect(refused.retryAfterMs).to.be.within(1, 100_000);
      expect((await second.take("other")).allowed).to.equal(true);
    } finally {
      await first.close();
      await second.close();
      await redis.stop();
    }
  });

  it("takes up to n tokens at once in Redis, atomically: concurrent takes never grant more than the bucket held", async function () {
    const redis = await startRedis();
    if (redis === undefined) requireService(this, REDIS);
    const policy = { capacity: 50, refillPerSecond: 0.001 };
    const [first, second] = await Promise.all([
      RedisRateLimitStore.connect(redis.url, policy),
      RedisRateLimitStore.connect(redis.url, policy),
    ]);
    try {
      const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? first : second).take("batch", 7)));
      // 12 × 7 = 84 asked of 50: exactly 50 granted, in sevens until one partial grant, then none.
      expect(decisions.reduce((sum, decision) => sum + decision.granted, 0)).to.equal(50);
      const grants = decisions.map((decision) => decision.granted).sort((a, b) => b - a);
      expect(grants).to.deep.equal([7, 7, 7, 7, 7, 7, 7, 1, 0, 0, 0, 0]);
      for (const decision of decisions) expect(decision.allowed).to.equal(decision.granted > 0);
      const partial = decisions.find((decision) => decision.granted === 1)!;
      expect(partial).to.include({ remaining: 0, retryAfterMs: 0 });
      const refused = await first.take("batch", 3);
      expect(refused).to.include({ allowed: false, granted: 0, remaining: 0 });
      expect(refused.retryAfterMs).to.be.within(900_000, 1_000_000);
      expect(await second.take("fresh", 60)).to.include({ granted: 50, remaining: 0 });
      expect((await first.take("fresh")).allowed, "take(key) is take-up-to-1").to.equal(false);
      // All or nothing in Redis too: 12 concurrent takes of 7 from a fresh bucket of 50 grant 7 seven times, then none.
      const whole = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? first : second).take("whole", 7, "all")));
      expect(whole.map((decision) => decision.granted).sort((a, b) => b - a)).to.deep.equal([7, 7, 7, 7, 7, 7, 7, 0, 0, 0, 0, 0]);
      expect(await first.take("whole", 2, "all")).to.include({ allowed: false, granted: 0, remaining: 1 });
    } finally {
      await first.close();
      await second.close();
      await redis.stop();
    }
  });
});
