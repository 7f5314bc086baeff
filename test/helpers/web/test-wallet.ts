import type { Page } from "playwright-core";
import { BaseError, createWalletClient, defineChain, http, numberToHex, type Hex, type TransactionRequest } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";

/** A chain the test wallet knows: its id and where it sends transactions and reads. */
export interface TestWalletChain {
  chainId: number;
  rpcUrl: string;
}

interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** How a wallet announces itself (EIP-6963's provider info): its name and icon are what the page lists. */
export interface WalletInfo {
  /** Unique per wallet in a page (EIP-6963: a UUIDv4). */
  uuid: string;
  name: string;
  /** Its reverse-DNS name, which wagmi takes as the connector's id. */
  rdns: string;
  /** A data URI (EIP-6963 requires one). */
  icon: string;
}

/** The test wallet as the suite has always announced it. */
export const TEST_WALLET_INFO: WalletInfo = {
  uuid: "5d0b6c0e-2f7e-4c55-9d0e-7e2a0a0f0b6e",
  name: "Test Wallet",
  rdns: "org.avn.testwallet",
  icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' fill='%231d4ed8'/%3E%3C/svg%3E",
};

/** How an injected EIP-1193 provider reports a rejection by its user (EIP-1193 code 4001). */
const USER_REJECTED = { code: 4001, message: "User rejected the request." };
const UNKNOWN_CHAIN = 4902;
const SIGNING_METHODS = new Set(["eth_sendTransaction", "personal_sign", "eth_signTypedData_v4"]);
const CONNECTING_METHODS = new Set(["eth_requestAccounts", "wallet_requestPermissions"]);

/**
 * A browser wallet for tests: injected into a page before its scripts run, announced through EIP-6963
 * like MetaMask, answering EIP-1193 requests with a development key held in the test process. Reads go
 * to the current chain's RPC; transactions are signed and sent by viem's local account; chain switches
 * and additions behave like a real wallet's (an unknown chain is error 4902 until it is added); typed
 * data is signed only for the chain it is on, as MetaMask does. The test can make it reject the next
 * signature or connection, as a user would. Several may be installed in one page, each announced with its own
 * `info` (name, uuid, rdns, icon); the default is "Test Wallet".
 */
export class TestWallet {
  readonly account: PrivateKeyAccount;
  /** How the wallet announces itself. */
  readonly info: WalletInfo;
  readonly knownChains = new Map<number, TestWalletChain>();
  /** Every `wallet_addEthereumChain` request the page made, as sent. */
  readonly addChainRequests: Array<Record<string, unknown>> = [];
  private chainId: number;
  private connected = false;
  private rejectNextSignature = false;
  private rejectNextConnect = false;
  private typedDataSigned = 0;
  private readonly pages = new Set<Page>();

  constructor(privateKey: Hex, chains: TestWalletChain[], initialChainId: number, info: WalletInfo = TEST_WALLET_INFO) {
    this.info = info;
    this.account = privateKeyToAccount(privateKey);
    for (const chain of chains) this.knownChains.set(chain.chainId, chain);
    this.chainId = initialChainId;
  }

  get address(): string {
    return this.account.address;
  }

  get currentChainId(): number {
    return this.chainId;
  }

  /** How many typed-data signatures (EIP-712) the wallet has made: a retry that reuses one asks for none. */
  get typedDataSignatures(): number {
    return this.typedDataSigned;
  }

  /** The next signing request (transaction or message) is rejected as if its user clicked Reject. */
  rejectNext(): void {
    this.rejectNextSignature = true;
  }

  /** The next connection request (`eth_requestAccounts`, `wallet_requestPermissions`) is rejected as if its user clicked Cancel. */
  rejectNextConnection(): void {
    this.rejectNextConnect = true;
  }

  /**
   * Injects the wallet into `page`: every document the page loads finds it announced. Wallets installed in the
   * same page announce themselves in the order they were installed.
   */
  async install(page: Page): Promise<void> {
    this.pages.add(page);
    page.once("close", () => this.pages.delete(page));
    await page.exposeFunction(this.bridge.request, (method: string, params: unknown[]) => this.handle(method, params));
    await page.addInitScript({ content: injectedProviderSource(this.info, this.bridge) });
  }

  /** The page's global functions through which this wallet's provider reaches the test process, and back. */
  private get bridge(): { request: string; emit: string } {
    const suffix = this.info.uuid === TEST_WALLET_INFO.uuid ? "" : `_${this.info.uuid.replace(/[^A-Za-z0-9]/g, "_")}`;
    return { request: `__testWalletRequest${suffix}`, emit: `__testWalletEmit${suffix}` };
  }

  private async emit(event: string, value: unknown): Promise<void> {
    for (const page of this.pages) {
      await page.evaluate(`window.${this.bridge.emit}(${JSON.stringify(event)}, ${JSON.stringify(value)})`);
    }
  }

  private async handle(method: string, params: unknown[]): Promise<RpcAnswer> {
    try {
      if (SIGNING_METHODS.has(method) && this.rejectNextSignature) {
        this.rejectNextSignature = false;
        return { error: USER_REJECTED };
      }
      if (CONNECTING_METHODS.has(method) && this.rejectNextConnect) {
        this.rejectNextConnect = false;
        return { error: USER_REJECTED };
      }
      switch (method) {
        case "eth_requestAccounts":
          this.connected = true;
          return { result: [this.account.address] };
        case "eth_accounts":
          return { result: this.connected ? [this.account.address] : [] };
        case "eth_chainId":
          return { result: numberToHex(this.chainId) };
        case "net_version":
          return { result: String(this.chainId) };
        case "wallet_requestPermissions":
        case "wallet_getPermissions":
          this.connected ||= method === "wallet_requestPermissions";
          return { result: this.connected ? [{ parentCapability: "eth_accounts" }] : [] };
        case "wallet_revokePermissions":
          this.connected = false;
          return { result: null };
        case "wallet_switchEthereumChain": {
          const chainId = Number((params[0] as { chainId: string }).chainId);
          if (!this.knownChains.has(chainId)) return { error: { code: UNKNOWN_CHAIN, message: `Unrecognized chain ID ${chainId}.` } };
          await this.switchTo(chainId);
          return { result: null };
        }
        case "wallet_addEthereumChain": {
          const request = params[0] as { chainId: string; rpcUrls: string[] };
          this.addChainRequests.push(request);
          const chainId = Number(request.chainId);
          this.knownChains.set(chainId, { chainId, rpcUrl: request.rpcUrls[0] });
          // MetaMask switches to a chain it has just added.
          await this.switchTo(chainId);
          return { result: null };
        }
        case "eth_sendTransaction":
          return { result: await this.sendTransaction(params[0] as Record<string, Hex | undefined>) };
        case "personal_sign":
          return { result: await this.account.signMessage({ message: { raw: params[0] as Hex } }) };
        case "eth_signTypedData_v4":
          return this.signTypedData(params[0] as string, JSON.parse(params[1] as string));
        default:
          return this.forward(method, params);
      }
    } catch (error) {
      // The page shows only the short message; a transaction the wallet could not send is the kind of
      // failure that is rare and timing-bound, so the whole error (the node's answer, the request's
      // gas, fees and value) goes to the test's output, for the run that shows it.
      if (method === "eth_sendTransaction")
        console.error(`test wallet: eth_sendTransaction on chain ${this.chainId} failed: ${(error as Error).message}`);
      return { error: { code: -32603, message: error instanceof BaseError ? error.shortMessage : (error as Error).message } };
    }
  }

  /**
   * Signs EIP-712 typed data as MetaMask does: only for its own account, and only when the domain's chain
   * id (if any) is the chain the wallet is on, so a page must switch the wallet before asking.
   */
  private async signTypedData(
    address: string,
    typedData: { domain?: { chainId?: number | string } } & Record<string, unknown>,
  ): Promise<RpcAnswer> {
    if (address.toLowerCase() !== this.account.address.toLowerCase())
      return { error: { code: 4100, message: "The requested account has not been authorized by the user." } };
    const domainChain = typedData.domain?.chainId;
    if (domainChain !== undefined && Number(domainChain) !== this.chainId) {
      return {
        error: { code: -32603, message: `Provided chainId "${Number(domainChain)}" must match the active chainId "${this.chainId}"` },
      };
    }
    const signature = await this.account.signTypedData(typedData as never);
    this.typedDataSigned += 1;
    return { result: signature };
  }

  private async switchTo(chainId: number): Promise<void> {
    if (chainId === this.chainId) return;
    this.chainId = chainId;
    await this.emit("chainChanged", numberToHex(chainId));
  }

  private currentChain(): TestWalletChain {
    return this.knownChains.get(this.chainId)!;
  }

  private async sendTransaction(request: Record<string, Hex | undefined>): Promise<Hex> {
    const chain = this.currentChain();
    const client = createWalletClient({
      account: this.account,
      chain: defineChain({
        id: chain.chainId,
        name: `chain ${chain.chainId}`,
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: { default: { http: [chain.rpcUrl] } },
      }),
      transport: http(chain.rpcUrl),
    });
    const transaction: TransactionRequest = {
      to: request.to,
      data: request.data ?? request.input,
      value: request.value === undefined ? undefined : BigInt(request.value),
      gas: request.gas === undefined ? undefined : BigInt(request.gas),
    };
    return client.sendTransaction(transaction as never);
  }

  private async forward(method: string, params: unknown[]): Promise<RpcAnswer> {
    const response = await fetch(this.currentChain().rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await response.json()) as RpcAnswer;
    return body.error === undefined ? { result: body.result } : { error: body.error };
  }
}

/**
 * Runs in the page before its own scripts: the EIP-1193 provider and its EIP-6963 announcement. Plain
 * JavaScript source rather than a function handed to Playwright: the test runner's TypeScript loader may
 * wrap a function's body in helpers (`__name`) that do not exist in the page.
 */
function injectedProviderSource(info: WalletInfo, bridge: { request: string; emit: string }): string {
  return `(() => {
  const info = ${JSON.stringify(info)};
  const bridge = ${JSON.stringify(bridge)};
  const listeners = new Map();
  const provider = {
    async request({ method, params }) {
      const answer = await window[bridge.request](method, params ?? []);
      if (answer.error !== undefined) {
        const error = new Error(answer.error.message);
        error.code = answer.error.code;
        error.data = answer.error.data;
        throw error;
      }
      return answer.result;
    },
    on(event, listener) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event).add(listener);
      return provider;
    },
    removeListener(event, listener) {
      listeners.get(event)?.delete(listener);
      return provider;
    },
  };
  window[bridge.emit] = (event, value) => listeners.get(event)?.forEach((listener) => listener(value));
  const announce = () => window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }));
  window.addEventListener("eip6963:requestProvider", announce);
  announce();
})();`;
}
