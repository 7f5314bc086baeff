import { expect } from "chai";

import { RedisRateLimitStore } from "../../../src/api/rate-limit/redis-store.js";
import { MemoryRateLimitStore, rateLimitHeaders } from "../../../src/api/rate-limit/token-bucket.js";
import { startRedis } from "../../helpers/redis.js";

describe("API rate limits: token buckets per key", function () {
  this.timeout(30_000);

  it("lets a full bucket's burst through, refuses the next request until a token refills, per key", async function () {
    let now = 1_000_000;
    const policy = { capacity: 3, refillPerSecond: 2 };
    const store = new MemoryRateLimitStore(policy, () => now);
    try {
      for (let i = 0; i < 3; i += 1) expect((await store.take("a")).allowed).to.equal(true);
      const refused = await store.take("a");
      expect(refused).to.deep.equal({ allowed: false, limit: 3, remaining: 0, retryAfterMs: 500, resetMs: 1_500 });
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

  it("shares one bucket per key between API processes through a real redis-server", async function () {
    const redis = await startRedis();
    if (redis === undefined) this.skip();
    const policy = { capacity: 5, refillPerSecond: 0.01 };
    const [first, second] = await Promise.all([RedisRateLimitStore.connect(redis!.url, policy), RedisRateLimitStore.connect(redis!.url, policy)]);
    try {
      const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? first : second).take("shared")));
      expect(decisions.filter((decision) => decision.allowed)).to.have.length(5);
      const refused = decisions.find((decision) => !decision.allowed)!;
      expect(refused.retryAfterMs).to.be.within(1, 100_000);
      expect((await second.take("other")).allowed).to.equal(true);
    } finally {
      await first.close();
      await second.close();
      await redis!.stop();
    }
  });
});
