import { defineChain, http } from "viem";
import { describe, expect, it } from "vitest";
import { createConfig, createStorage, mock } from "wagmi";
import { connect, disconnect } from "wagmi/actions";

import { orderWallets, recentConnectorId } from "../src/lib/recent-wallets";

const wallet = (id: string) => ({ id, name: id });

describe("orderWallets", () => {
  it("lists the last used wallet first, the others in their announcement order", () => {
    const announced = [wallet("io.metamask"), wallet("io.rabby"), wallet("com.brave.wallet")];
    expect(orderWallets(announced, "com.brave.wallet").map((w) => w.id)).toEqual(["com.brave.wallet", "io.metamask", "io.rabby"]);
    expect(orderWallets(announced, "io.rabby").map((w) => w.id)).toEqual(["io.rabby", "io.metamask", "com.brave.wallet"]);
  });

  it("keeps the announcement order without a recent wallet, or when it is no longer installed or already first", () => {
    const announced = [wallet("io.metamask"), wallet("io.rabby")];
    for (const recent of [null, "app.uninstalled", "io.metamask"])
      expect(orderWallets(announced, recent).map((w) => w.id)).toEqual(["io.metamask", "io.rabby"]);
    expect(orderWallets([], "io.metamask")).toEqual([]);
  });

  it("returns a new array, leaving wagmi's list as it was", () => {
    const announced = [wallet("a"), wallet("b")];
    const ordered = orderWallets(announced, "b");
    expect(ordered).not.toBe(announced);
    expect(announced.map((w) => w.id)).toEqual(["a", "b"]);
  });
});

describe("recentConnectorId", () => {
  /** A browser's localStorage, in memory. */
  const memoryStorage = () => {
    const items = new Map<string, string>();
    return {
      items,
      getItem: (key: string) => items.get(key) ?? null,
      setItem: (key: string, value: string) => void items.set(key, value),
      removeItem: (key: string) => void items.delete(key),
    };
  };
  const chain = defineChain({
    id: 901,
    name: "Devnet L2",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: ["http://127.0.0.1:1"] } },
  });

  it("reads the connector that wagmi's own connect recorded, and keeps it after a disconnect", async () => {
    const browserStorage = memoryStorage();
    const config = createConfig({
      chains: [chain],
      connectors: [mock({ accounts: ["0x000000000000000000000000000000000000dEaD"] })],
      multiInjectedProviderDiscovery: false,
      storage: createStorage({ storage: browserStorage }),
      transports: { [chain.id]: http() },
    });
    expect(await recentConnectorId(config.storage)).toBeNull();
    await connect(config, { connector: config.connectors[0] });
    expect(await recentConnectorId(config.storage)).toBe("mock");
    // Under wagmi's key in the browser's storage: a reload finds it.
    expect([...browserStorage.items.keys()]).toContain("wagmi.recentConnectorId");
    await disconnect(config);
    expect(await recentConnectorId(config.storage)).toBe("mock");
  });

  it("is null without storage, or when the storage refuses to be read", async () => {
    expect(await recentConnectorId(null)).toBeNull();
    const refusing = createStorage({
      storage: {
        getItem: () => {
          throw new Error("SecurityError: storage is disabled");
        },
        setItem: () => undefined,
        removeItem: () => undefined,
      },
    });
    expect(await recentConnectorId(refusing)).toBeNull();
  });
});
