import type { RedisServer } from "../../src/devnet/redis-server.ts";
import type { RequiredService } from "./services.ts";

/** What `startRedis` needs, for `requireService(this, REDIS)` when it returns undefined. */
export const REDIS: RequiredService = {
  name: "redis-server",
  missing: "not installed",
  install: "apt-get install redis-server",
};

/** A throwaway redis-server on a free port (the local stack's own), or undefined when the machine has none. */
export { startRedisServer as startRedis } from "../../src/devnet/redis-server.ts";

/** A redis-server a test can take away and bring back, on one port (`kill`, `restart`, `pause`, `resume`). */
export type ControllableRedis = RedisServer;
export { startRedisServer as startControllableRedis } from "../../src/devnet/redis-server.ts";
