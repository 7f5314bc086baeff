import { createHash } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import { isIPv6 } from "node:net";

import proxyaddr from "@fastify/proxy-addr";

import { HUB_PATH, normalizeHubUrl } from "../../common/hub-protocol.ts";
import { TokenBucket } from "../../common/token-bucket.ts";

/**
 * The hub's limits before a node is logged in (`ATTESTATION_MAX_PENDING`… in src/api/config.ts, returned by
 * `attestationSettings(config).admission`). Fields left out take the configuration's defaults.
 */
export interface HubAdmissionOptions {
  /** The URLs nodes dial (ws:// or wss://…/attest/ws); unset: the loopback URLs of the port the server listens on. */
  publicUrls?: readonly string[];
  /** WebSocket connections upgraded but not logged in yet, in all (beyond: 503 before the handshake). */
  maxPending?: number;
  /** …and per source address, an IPv6 address counted with its whole /64 (beyond: 429; see `addressKey`). */
  maxPendingPerAddress?: number;
  /** Hellos checked per second, in all, with a burst of twice as many. */
  hellosPerSecond?: number;
  /** How long a refused burner, or an address that sent bad hellos or none, is refused again without a check. */
  refusalMemoryMs?: number;
  /** The clock `refusalMemoryMs` is measured by, in milliseconds: Date.now unless a test moves it. */
  now?: () => number;
  /** Proxies whose X-Forwarded-For is believed (proxy-addr syntax: addresses, CIDR ranges, `loopback`…). */
  trustedProxies?: readonly string[];
}

export const ADMISSION_DEFAULTS = {
  maxPending: 256,
  maxPendingPerAddress: 8,
  hellosPerSecond: 20,
  refusalMemoryMs: 60_000,
} as const;

/** Most remembered refusals of each kind: a flood of fresh keys or addresses cannot grow the memory without bound. */
const MAX_REMEMBERED = 10_000;

/** Why a connection or a login was refused: the `reason` label of `api_attestation_connections_refused_total`. */
export type RefusalReason =
  | "pending-cap"
  | "address-cap"
  | "refused-recently"
  | "hello-rate"
  | "wrong-url"
  | "auth"
  | "timeout"
  | "not-operator"
  | "check-failed"
  | "protocol"
  | "licenses-lost";

/**
 * What a source address is counted under, for the pending caps and the strikes: an IPv4 address itself
 * (one address is already what a NAT or a carrier-grade NAT shares), an IPv6 address its /64 prefix
 * (`2001:db8:0:7::/64`). A /64 is the least one subscriber gets (SLAAC needs a whole /64 for one link;
 * providers delegate a /56 or a /48 per site, RIPE-690), so one host can pick any of 2^64 source addresses
 * at no cost: keyed by the whole address, one machine could take every pending slot. Any spelling of an
 * address gives the same key (full or compressed, upper case, a zone id `%eth0`, an embedded dotted quad),
 * and an IPv4-mapped address (`::ffff:192.0.2.1`) is its IPv4 address. Anything else (no address at all)
 * is its own key.
 */
export function addressKey(address: string): string {
  const zone = address.indexOf("%");
  const bare = zone === -1 ? address : address.slice(0, zone);
  if (!isIPv6(bare)) return bare;
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff)
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join(".");
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address `isIPv6` accepts (without a zone id). */
function ipv6Groups(address: string): number[] {
  const parse = (part: string) =>
    part === ""
      ? []
      : part.split(":").flatMap((group) => {
          if (!group.includes(".")) return [parseInt(group, 16)];
          const [a, b, c, d] = group.split(".").map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const gap = address.indexOf("::");
  if (gap === -1) return parse(address);
  const head = parse(address.slice(0, gap));
  const tail = parse(address.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * The key a refused login is remembered under: the burner and the licenses it named. A node names the
 * licenses delegated to it as of its last check, so one refused for a list gone stale (a license
 * transferred since) is checked afresh as soon as it names its licenses as they are now; a key that
 * names another list costs what a fresh key costs (one L2 call), no more.
 */
function loginKey(burner: string, licenseIds: readonly (bigint | string)[]): string {
  const ids = licenseIds.map((id) => BigInt(id)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `${burner.toLowerCase()}:${createHash("sha256").update(ids.join(",")).digest("base64url")}`;
}

/** Keys remembered until a deadline, at most `MAX_REMEMBERED` (the oldest is forgotten first). */
class Memory<Value> {
  readonly #entries = new Map<string, { until: number; value: Value }>();
  readonly #ms: number;
  readonly #now: () => number;

  constructor(ms: number, now: () => number) {
    this.#ms = ms;
    this.#now = now;
  }

  get(key: string): Value | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > this.#now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: Value): void {
    if (this.#ms <= 0) return;
    this.#entries.delete(key); // re-inserted last: the Map's order is the eviction order
    this.#entries.set(key, { until: this.#now() + this.#ms, value });
    if (this.#entries.size > MAX_REMEMBERED) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

/**
 * The admission state shared by every connection of one hub: pending connections by source address (an
 * IPv6 one by its /64: `addressKey`), the hello rate, and the refusals remembered. Everything here is
 * checked before any signature recovery or L2 read, so a flood costs the hub a map look-up per connection.
 */
export class AdmissionGate {
  readonly maxPending: number;
  readonly maxPendingPerAddress: number;
  readonly #publicUrls: ReadonlySet<string> | undefined;
  readonly #trust: ReturnType<typeof proxyaddr.compile>;
  readonly #hellos: TokenBucket;
  /** Pending connections by `addressKey`. */
  readonly #pendingByAddress = new Map<string, number>();
  #pending = 0;
  /** Logins refused after a check (not an operator), by `loginKey`: their close code and reason, repeated without an L2 read. */
  readonly #refusedBurners: Memory<{ code: number; reason: string }>;
  /**
   * Strikes by `addressKey` within the memory window: bad hellos, and connections that sent no hello before
   * the challenge timed out. At `maxPendingPerAddress` the address is refused.
   */
  readonly #strikes: Memory<number>;

  constructor(options: HubAdmissionOptions = {}) {
    this.maxPending = options.maxPending ?? ADMISSION_DEFAULTS.maxPending;
    this.maxPendingPerAddress = options.maxPendingPerAddress ?? ADMISSION_DEFAULTS.maxPendingPerAddress;
    const hellosPerSecond = options.hellosPerSecond ?? ADMISSION_DEFAULTS.hellosPerSecond;
    this.#hellos = new TokenBucket(hellosPerSecond, 2 * hellosPerSecond);
    const memoryMs = options.refusalMemoryMs ?? ADMISSION_DEFAULTS.refusalMemoryMs;
    const now = options.now ?? Date.now;
    this.#refusedBurners = new Memory(memoryMs, now);
    this.#strikes = new Memory(memoryMs, now);
    this.#trust = proxyaddr.compile([...(options.trustedProxies ?? [])]);
    if (options.publicUrls !== undefined) this.#publicUrls = new Set(options.publicUrls.map((url) => normalizeHubUrl(url) ?? url));
  }

  /**
   * The client's address: the socket's, or the X-Forwarded-For entry the trusted proxies vouch for (an
   * IPv4-mapped one as IPv4). `enter` and `strike` count it under its `addressKey`.
   */
  sourceAddress(request: IncomingMessage): string {
    let address: string;
    try {
      address = proxyaddr(request, this.#trust);
    } catch {
      address = request.socket.remoteAddress ?? "unknown";
    }
    return address.startsWith("::ffff:") ? address.slice(7) : address;
  }

  /**
   * Counts a connection from `address` as pending, or says why not (checked in this order: an address that
   * earned too many strikes lately, the global cap, the per-address cap; an IPv6 address counts with its
   * /64). Returns the release function, to call once when the connection is admitted or closed.
   */
  enter(source: string): (() => void) | Extract<RefusalReason, "refused-recently" | "pending-cap" | "address-cap"> {
    const address = addressKey(source);
    if ((this.#strikes.get(address) ?? 0) >= this.maxPendingPerAddress) return "refused-recently";
    if (this.#pending >= this.maxPending) return "pending-cap";
    const mine = this.#pendingByAddress.get(address) ?? 0;
    if (mine >= this.maxPendingPerAddress) return "address-cap";
    this.#pending += 1;
    this.#pendingByAddress.set(address, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#pending -= 1;
      const left = (this.#pendingByAddress.get(address) ?? 1) - 1;
      if (left === 0) this.#pendingByAddress.delete(address);
      else this.#pendingByAddress.set(address, left);
    };
  }

  /** Connections pending now (tests, metrics). */
  get pending(): number {
    return this.#pending;
  }

  /** Takes one hello from the global budget; false: refuse it with "try later". */
  takeHello(): boolean {
    return this.#hellos.take();
  }

  /** The refusal remembered for a login of `burner` naming `licenseIds`, if any. */
  refusedBurner(burner: string, licenseIds: readonly (bigint | string)[]): { code: number; reason: string } | undefined {
    return this.#refusedBurners.get(loginKey(burner, licenseIds));
  }

  rememberBurner(burner: string, licenseIds: readonly (bigint | string)[], refusal: { code: number; reason: string }): void {
    this.#refusedBurners.set(loginKey(burner, licenseIds), refusal);
  }

  /**
   * A strike against `source` (counted under its `addressKey`): a bad hello (malformed, wrong URL, bad
   * signature, not an operator) or none before the challenge timed out.
   */
  strike(source: string): void {
    const address = addressKey(source);
    this.#strikes.set(address, (this.#strikes.get(address) ?? 0) + 1);
  }

  /**
   * Whether a login signed for `url` is for this hub: one of its public URLs, or, when none is configured,
   * a loopback URL of the port `server` listens on now (read at each check: the port may be chosen at listen).
   */
  isPublicUrl(url: string, server: Server | undefined): boolean {
    const normalized = normalizeHubUrl(url);
    if (normalized === undefined) return false;
    if (this.#publicUrls !== undefined) return this.#publicUrls.has(normalized);
    const address = server?.address();
    if (address === null || address === undefined || typeof address === "string") return false;
    const port = address.port;
    return ["127.0.0.1", "localhost", "[::1]"].some((host) => normalized === `ws://${host}:${port}${HUB_PATH}`);
  }
}
