/**
 * The SSRF guard of webhook URLs. A subscriber chooses the URL the API will POST to, so without a guard
 * anyone with a key could make the API call its own network: the cloud metadata service (169.254.169.254),
 * a database on 10.x, an admin page on localhost. The guard allows plain http(s) URLs whose host resolves
 * only to public unicast addresses; `WEBHOOK_ALLOW_PRIVATE=true` (development, tests) lifts the address rule.
 *
 * Checking the URL once, at subscription, is not enough: a name may resolve to a public address then and to a
 * private one at delivery (DNS rebinding). The poster (webhook-poster.ts) therefore runs `resolveWebhookHost`
 * again as the connection's own lookup, so the address it connects to is the address that was checked.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";

import { AvnError } from "@avn/protocol/errors";
import ipaddr from "ipaddr.js";

/** A URL the API refuses to deliver to; the message names the field (`url`) and is fit for a 400. */
export class WebhookUrlError extends AvnError<"WEBHOOK_URL"> {
  readonly field = "url";

  constructor(message: string, options?: { cause?: unknown }) {
    super("WEBHOOK_URL", message, options);
    this.name = "WebhookUrlError";
  }
}

/** Resolves a host name to every address it has (injected by tests; node:dns by default). */
export type WebhookHostLookup = (hostname: string) => Promise<string[]>;

export interface WebhookDestinationOptions {
  /** Let private, loopback and link-local addresses through (`WEBHOOK_ALLOW_PRIVATE=true`). */
  allowPrivate: boolean;
  lookup?: WebhookHostLookup;
}

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Parses a subscriber's URL and checks its form (not yet where it points: `checkWebhookDestination`). */
export function parseWebhookUrl(raw: string): URL {
  if (typeof raw !== "string" || raw === "") throw new WebhookUrlError("url is required");
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw new WebhookUrlError(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError("url must be an absolute http:// or https:// URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new WebhookUrlError("url must use http:// or https://");
  // Credentials in a URL end up in logs and in the delivery list; the subscriber authenticates us by the signature.
  if (url.username !== "" || url.password !== "") throw new WebhookUrlError("url must not contain a user name or password");
  if (url.hostname === "") throw new WebhookUrlError("url must have a host");
  return url;
}

// All global unicast IPv6 is allocated from 2000::/3. ipaddr.js calls "unicast" whatever is in none of its
// special ranges, which includes ::/8 (IPv4-compatible addresses such as ::7f00:1, deprecated but routable
// by some stacks); requiring 2000::/3 as well closes that door.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * Whether an address is public: ipaddr.js's plain "unicast" range and nothing special (loopback, private,
 * link-local, unique-local, CGNAT, multicast, reserved, documentation, 6to4, Teredo, NAT64…). An IPv4-mapped
 * IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4 address it reaches. Anything unparsable is not public.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip); // unwraps ::ffff:a.b.c.d to a.b.c.d
  if (address.range() !== "unicast") return false;
  return address.kind() === "ipv4" || address.match(GLOBAL_UNICAST_V6);
}

/** A URL's host without the brackets of an IPv6 literal (`[::1]` → `::1`). */
export function webhookHostname(url: URL): string {
  const host = url.hostname;
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

async function systemLookup(hostname: string): Promise<string[]> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

const PRIVATE_MESSAGE = "url resolves to a private, loopback or link-local address";

/**
 * Every address `hostname` resolves to, each one checked: throws `WebhookUrlError` when one of them is not
 * public (unless `allowPrivate`) or when the name does not resolve. An IP literal is checked as it is. All
 * addresses must pass, not one: the connection may use any of them.
 */
export async function resolveWebhookHost(hostname: string, options: WebhookDestinationOptions): Promise<string[]> {
  let addresses: string[];
  if (isIP(hostname) !== 0) {
    addresses = [hostname];
  } else {
    try {
      addresses = await (options.lookup ?? systemLookup)(hostname);
    } catch (error) {
      throw new WebhookUrlError("url's host does not resolve", { cause: error });
    }
    if (addresses.length === 0) throw new WebhookUrlError("url's host does not resolve");
  }
  if (!options.allowPrivate && !addresses.every(isPublicAddress)) throw new WebhookUrlError(PRIVATE_MESSAGE);
  return addresses;
}

/** Checks where a parsed webhook URL points (see `resolveWebhookHost`); resolves when the API may deliver there. */
export async function checkWebhookDestination(url: URL, options: WebhookDestinationOptions): Promise<void> {
  await resolveWebhookHost(webhookHostname(url), options);
}
