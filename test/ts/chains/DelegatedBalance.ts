import { expect } from "chai";
import { decodeFunctionData, encodeFunctionResult, getAddress, toHex, zeroHash, type Address, type Hex } from "viem";

import {
  DELEGATE_REGISTRY_ABI,
  DelegationType,
  delegatedShares,
  lentBalance,
  MAX_DELEGATING_WALLETS,
  type Delegation,
} from "@avn/protocol/delegations";
import { delegatedBalanceOf } from "../../../src/chains/evm/delegated-balance.ts";
import { DelegationLimitError, DelegationsUnavailableError } from "../../../src/chains/rpc/errors.ts";

const OWNER = getAddress("0x00000000000000000000000000000000000000aa");
const ASSET = getAddress("0x00000000000000000000000000000000000000bb");
const OTHER_ASSET = getAddress("0x00000000000000000000000000000000000000cc");
const walletAt = (index: number): Address => getAddress(toHex(0x1000 + index, { size: 20 }));

function delegation(fields: Partial<Delegation> & Pick<Delegation, "type_" | "from">): Delegation {
  return { to: OWNER, rights: zeroHash, contract_: ASSET, tokenId: 0n, amount: 0n, ...fields };
}

/** The pure rules, on hand-built lists: which delegations count, and how much each lends. */
describe("delegatedShares and lentBalance (delegate.xyz v2 rules)", function () {
  it("keeps empty rights only, the owner's own and other assets' delegations out, one share per wallet", function () {
    const [a, b, c] = [walletAt(1), walletAt(2), walletAt(3)];
    const shares = delegatedShares(
      [
        delegation({ type_: DelegationType.CONTRACT, from: a }),
        delegation({ type_: DelegationType.ERC721, from: a, tokenId: 4n }),
        delegation({ type_: DelegationType.CONTRACT, from: b, rights: `0x${"00".repeat(31)}01` }),
        delegation({ type_: DelegationType.ERC20, from: b, rights: `0x${"00".repeat(31)}01`, amount: 9n }),
        delegation({ type_: DelegationType.ERC20, from: c, amount: 5n }),
        delegation({ type_: DelegationType.ERC20, from: c, contract_: OTHER_ASSET, amount: 7n }),
        delegation({ type_: DelegationType.ALL, from: OWNER }),
        delegation({ type_: DelegationType.ALL, from: walletAt(4), to: walletAt(5) }),
      ],
      OWNER,
      ASSET,
    );
    expect(shares).to.deep.equal([
      { from: a, whole: true, amount: 0n, tokenIds: [4n] },
      { from: c, whole: false, amount: 5n, tokenIds: [] },
    ]);
    // With an ERC-1155 id: only that id's amounts (and whole-wallet or contract delegations) count.
    const byId = delegatedShares(
      [
        delegation({ type_: DelegationType.ERC1155, from: a, tokenId: 1n, amount: 2n }),
        delegation({ type_: DelegationType.ERC1155, from: b, tokenId: 2n, amount: 3n }),
        delegation({ type_: DelegationType.ERC20, from: c, amount: 4n }),
      ],
      OWNER,
      ASSET,
      1n,
    );
    expect(byId).to.deep.equal([{ from: a, whole: false, amount: 2n, tokenIds: [] }]);
  });

  it("lends all of a whole share, else the kind's part, never more than the balance", function () {
    const share = { from: walletAt(1), whole: false, amount: 5n, tokenIds: [1n, 2n] };
    expect(lentBalance({ ...share, whole: true }, 9n, { erc721: true, owned: 0 })).to.equal(9n);
    expect(lentBalance(share, 9n, { erc721: false, owned: 2 })).to.equal(5n);
    expect(lentBalance(share, 3n, { erc721: false, owned: 2 })).to.equal(3n);
    expect(lentBalance(share, 9n, { erc721: true, owned: 2 })).to.equal(2n);
    expect(lentBalance(share, 1n, { erc721: true, owned: 2 })).to.equal(1n);
  });
});

/**
 * `delegatedBalanceOf`'s refusals, over a reader that answers as a chain would for crafted registry lists (a
 * thousand and one real delegations would take as many transactions): beyond the limit a refusal, never a
 * smaller sum; no registry at its address, another refusal.
 */
describe("delegatedBalanceOf: limits", function () {
  const readerWith = (delegations: Delegation[] | "no registry") => ({
    balanceOf: async () => ({ balance: 1n, queryResult: toHex(1n, { size: 32 }), blockNumber: 7n }),
    callAt: async (_to: string, data: string) => {
      if (delegations === "no registry") return "0x";
      const call = decodeFunctionData({ abi: DELEGATE_REGISTRY_ABI, data: data as Hex });
      if (call.functionName !== "getIncomingDelegations") throw new Error(`unexpected call ${call.functionName}`);
      return encodeFunctionResult({ abi: DELEGATE_REGISTRY_ABI, functionName: "getIncomingDelegations", result: delegations });
    },
  });

  it(`counts ${MAX_DELEGATING_WALLETS} delegating wallets and refuses one more`, async function () {
    const all = Array.from({ length: MAX_DELEGATING_WALLETS + 1 }, (_, index) =>
      delegation({ type_: DelegationType.ALL, from: walletAt(index) }),
    );
    const counted = await delegatedBalanceOf(readerWith(all.slice(0, MAX_DELEGATING_WALLETS)), ASSET, OWNER, 7n);
    expect(counted.balance).to.equal(BigInt(MAX_DELEGATING_WALLETS) + 1n);
    expect(counted.wallets).to.have.length(MAX_DELEGATING_WALLETS);
    const refused = await delegatedBalanceOf(readerWith(all), ASSET, OWNER, 7n).catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(DelegationLimitError);
    expect((refused as Error).message).to.include(`${MAX_DELEGATING_WALLETS + 1} wallets delegate to ${OWNER}`);
  });

  it("refuses to read delegations where the registry is not deployed", async function () {
    const refused = await delegatedBalanceOf(readerWith("no registry"), ASSET, OWNER, 7n).catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(DelegationsUnavailableError);
  });
});
