import { useConfig, useConnection, useReadContract } from "wagmi";

import { useAppSettings } from "../app-context";
import { AmountField, useAmountInput } from "../components/AmountField";
import { ApproveButton } from "../components/ApproveButton";
import { ChainNotice } from "../components/ChainNotice";
import { TxButton } from "../components/TxButton";
import { WalletRequired } from "../components/WalletRequired";
import { stakedTokenAbi } from "../generated/abis";
import { usePrimaryFunds } from "../hooks/usePrimaryFunds";
import { formatAmount } from "../lib/format";
import { simulateAndWrite } from "../lib/transactions";
import { RedeemForm } from "./stake/RedeemForm";
import { Redemptions } from "./stake/Redemptions";

/** Staking primary tokens 1:1, requesting redemptions, and completing or cancelling them (all on L2). */
export default function StakePage() {
  const { config, chains } = useAppSettings();
  const { address: owner, status } = useConnection();
  const staked = config.contracts.l2.StakedToken;
  const { balance: primaryBalance, allowance } = usePrimaryFunds(staked);
  const stakedBalance = useReadContract({
    address: staked,
    abi: stakedTokenAbi,
    chainId: chains.l2.id,
    functionName: "balanceOf",
    args: [owner!],
    query: { enabled: owner !== undefined },
  }).data;

  return (
    <section>
      <ChainNotice expected="l2" />
      <WalletRequired>Connect a wallet to stake primary tokens and to redeem them.</WalletRequired>

      {status === "connected" && <h2>Your balances</h2>}
      {status === "connected" && (
        <div className="grid">
          <div className="panel">
            <div>Primary tokens</div>
            <div className="stat" data-testid="primary-balance">
              {primaryBalance === undefined ? "…" : formatAmount(primaryBalance)}
            </div>
          </div>
          <div className="panel">
            <div>Staked tokens</div>
            <div className="stat" data-testid="staked-balance">
              {stakedBalance === undefined ? "…" : formatAmount(stakedBalance)}
            </div>
          </div>
        </div>
      )}

      <StakeForm primaryBalance={primaryBalance} allowance={allowance} />
      <RedeemForm stakedBalance={stakedBalance} />
      <Redemptions />
    </section>
  );
}

/** Step 1 approves the staked-token contract for the amount, step 2 stakes it. */
function StakeForm({ primaryBalance, allowance }: { primaryBalance: bigint | undefined; allowance: bigint | undefined }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const input = useAmountInput({
    decimals: 18,
    max: primaryBalance,
    aboveMax: primaryBalance === undefined ? undefined : `You hold ${formatAmount(primaryBalance)} primary tokens.`,
  });
  const amount = input.value;
  const staked = config.contracts.l2.StakedToken;
  // Said next to the Stake button; the contract would refuse these anyway, less readably.
  const blocker =
    amount === undefined
      ? (input.error ?? "Enter an amount to stake.")
      : allowance === undefined || allowance < amount
        ? "Approve the amount first."
        : undefined;

  return (
    <section className="panel" aria-labelledby="stake-heading">
      <h2 id="stake-heading">Stake primary tokens</h2>
      <AmountField
        id="stake-amount"
        label="Amount to stake"
        amount={input}
        withMax
        hint="You receive the same amount of staked tokens, without fee or lock."
      />
      <ApproveButton spender={staked} amount={amount} allowance={allowance} />
      <TxButton
        chainId={chains.l2.id}
        disabled={blocker !== undefined}
        disabledReason={blocker}
        onMined={() => input.setText("")}
        send={() =>
          simulateAndWrite(wagmiConfig, {
            address: staked,
            abi: stakedTokenAbi,
            functionName: "stake",
            args: [amount!],
            chainId: chains.l2.id,
          })
        }
      >
        Stake
      </TxButton>
    </section>
  );
}
