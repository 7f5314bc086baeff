import { useRef, useState } from "react";
import type { Address, TransactionReceipt } from "viem";
import { useBalance, useConfig, useReadContract } from "wagmi";

import { useAppSettings } from "../../app-context";
import { AmountField, useAmountInput } from "../../components/AmountField";
import { TxButton } from "../../components/TxButton";
import { l1StandardBridgeAbi, l2OutputOracleAbi, l2StandardBridgeAbi, primaryTokenAbi } from "../../generated/abis";
import { formatAmount, formatDuration } from "../../lib/format";
import { intentSettings } from "../../lib/intents";
import { DepositProgress } from "./DepositProgress";
import { FastOrderStep } from "./FastOrderStep";
import {
  ASSET_NAMES,
  DEPOSIT_MIN_GAS_LIMIT,
  LEGACY_ETH,
  L2_STANDARD_BRIDGE,
  WITHDRAWAL_MIN_GAS_LIMIT,
  writeChecked,
  type Asset,
  type Direction,
  type WithdrawalMode,
} from "./shared";

/**
 * Direction, asset and amount, the source-chain balance, and the transactions of a deposit or a withdrawal (to the
 * sender's own address). A withdrawal is standard (the L2 bridge, then prove and finalize on L1 after the challenge
 * period) or fast (an intent order a solver fills on L1 within a few blocks, for a fee: `FastOrderStep`); so is a
 * deposit (the standard bridge, or an intent order a solver fills on the L2 at its next blocks).
 */
export function BridgeForm({ account }: { account: Address | undefined }) {
  const wagmiConfig = useConfig();
  const { config, chains } = useAppSettings();
  const [direction, setDirection] = useState<Direction>("deposit");
  const [asset, setAsset] = useState<Asset>("eth");
  const [mode, setMode] = useState<WithdrawalMode>("standard");
  const [deposit, setDeposit] = useState<{ receipt: TransactionReceipt; description: string }>();
  // What the last Deposit click sent, for the progress panel's title (the field may change while it is pending).
  const sentDescription = useRef("");

  const isDeposit = direction === "deposit";
  const isFast = mode === "fast";
  const intents = intentSettings(config, direction);
  const source = isDeposit ? chains.l1 : chains.l2;
  const token = isDeposit ? config.contracts.l1.PrimaryToken : config.contracts.l2.PrimaryToken;
  const l1Bridge = config.contracts.l1.L1StandardBridge;
  const connected = account !== undefined;

  const ethBalance = useBalance({ address: account, chainId: source.id, query: { enabled: connected && asset === "eth" } });
  const tokenBalance = useReadContract({
    address: token,
    abi: primaryTokenAbi,
    functionName: "balanceOf",
    args: account === undefined ? undefined : [account],
    chainId: source.id,
    query: { enabled: connected && asset === "token" },
  });
  // The L1 bridge pulls the tokens it deposits, so it needs an allowance; the L2 bridge burns without one.
  const allowance = useReadContract({
    address: config.contracts.l1.PrimaryToken,
    abi: primaryTokenAbi,
    functionName: "allowance",
    args: account === undefined ? undefined : [account, l1Bridge],
    chainId: chains.l1.id,
    query: { enabled: connected && isDeposit && asset === "token" },
  });

  // The standard withdrawal's wait on L1, said beside the fast one's: the output oracle's finalization period.
  const challengePeriod = useReadContract({
    address: config.contracts.l1.L2OutputOracle,
    abi: l2OutputOracleAbi,
    functionName: "FINALIZATION_PERIOD_SECONDS",
    chainId: chains.l1.id,
    query: { enabled: !isDeposit, staleTime: Infinity },
  });

  const balance = asset === "eth" ? ethBalance.data?.value : tokenBalance.data;
  const balanceError = asset === "eth" ? ethBalance.error : tokenBalance.error;
  // Both assets have 18 decimals (ETH and the primary token, on either chain).
  const amountInput = useAmountInput({ decimals: 18, max: balance, aboveMax: `The amount is more than your balance on ${source.name}.` });
  const amount = amountInput.value;
  const disabledReason =
    amountInput.error ?? (amount === undefined ? "Enter an amount." : balance === undefined ? "Loading your balance…" : undefined);
  const needsApproval = isDeposit && asset === "token" && amount !== undefined && allowance.data !== undefined && allowance.data < amount;
  // The approval step stays on screen, with its outcome, once it has done its job for this amount.
  const [approved, setApproved] = useState<bigint>();
  const showApproval = needsApproval || (approved !== undefined && approved === amount);

  const sendDeposit = () => {
    sentDescription.current = `${formatAmount(amount!)} ${ASSET_NAMES[asset]}`;
    return asset === "eth"
      ? writeChecked(wagmiConfig, {
          address: l1Bridge,
          abi: l1StandardBridgeAbi,
          functionName: "depositETHTo",
          args: [account!, DEPOSIT_MIN_GAS_LIMIT, "0x"],
          value: amount!,
          chainId: chains.l1.id,
          account: account!,
        })
      : writeChecked(wagmiConfig, {
          address: l1Bridge,
          abi: l1StandardBridgeAbi,
          functionName: "depositERC20To",
          args: [config.contracts.l1.PrimaryToken, config.contracts.l2.PrimaryToken, account!, amount!, DEPOSIT_MIN_GAS_LIMIT, "0x"],
          chainId: chains.l1.id,
          account: account!,
        });
  };
  const sendWithdrawal = () =>
    writeChecked(wagmiConfig, {
      address: L2_STANDARD_BRIDGE,
      abi: l2StandardBridgeAbi,
      functionName: "withdrawTo",
      // ETH leaves L2 as value sent to the bridge under the legacy ETH token address; the token is burned by the bridge.
      args: [asset === "eth" ? LEGACY_ETH : config.contracts.l2.PrimaryToken, account!, amount!, WITHDRAWAL_MIN_GAS_LIMIT, "0x"],
      value: asset === "eth" ? amount! : 0n,
      chainId: chains.l2.id,
      account: account!,
    });

  return (
    <>
      <form className="panel" onSubmit={(event) => event.preventDefault()} aria-label="Bridge transfer">
        <fieldset>
          <legend>Direction</legend>
          <Radio
            name="direction"
            id="bridge-direction-deposit"
            checked={isDeposit}
            onChange={() => setDirection("deposit")}
            label="Deposit: L1 → L2"
          />
          <Radio
            name="direction"
            id="bridge-direction-withdraw"
            checked={!isDeposit}
            onChange={() => setDirection("withdraw")}
            label="Withdraw: L2 → L1"
          />
        </fieldset>
        <fieldset>
          <legend>Asset</legend>
          <Radio name="asset" id="bridge-asset-eth" checked={asset === "eth"} onChange={() => setAsset("eth")} label={ASSET_NAMES.eth} />
          <Radio
            name="asset"
            id="bridge-asset-token"
            checked={asset === "token"}
            onChange={() => setAsset("token")}
            label={ASSET_NAMES.token}
          />
        </fieldset>
        <fieldset>
          <legend>{isDeposit ? "Deposit" : "Withdrawal"}</legend>
          <Radio
            name="mode"
            id="bridge-mode-standard"
            checked={mode === "standard"}
            onChange={() => setMode("standard")}
            label="Standard"
          />
          <Radio name="mode" id="bridge-mode-fast" checked={mode === "fast"} onChange={() => setMode("fast")} label="Fast (intent)" />
        </fieldset>
        <p className="hint">
          From {source.name} to {(isDeposit ? chains.l2 : chains.l1).name}, to your own address.
          {!isDeposit &&
            !isFast &&
            ` A withdrawal needs two more transactions on L1 (prove, then finalize after the challenge period${
              challengePeriod.data === undefined ? "" : `: ${formatDuration(challengePeriod.data)} on this network`
            }), listed below.`}
        </p>
        <AmountField
          id="bridge-amount"
          label="Amount"
          amount={amountInput}
          hintProps={{ id: "bridge-balance", "data-testid": "bridge-balance" }}
          hint={
            !connected
              ? "Connect a wallet to see your balance."
              : balanceError !== null
                ? `Could not read your balance on ${source.name}.`
                : balance === undefined
                  ? `Loading your balance on ${source.name}…`
                  : `Your balance on ${source.name}: ${formatAmount(balance)} ${ASSET_NAMES[asset]}`
          }
        />
        {/* Keyed so a step's transaction state does not carry over to another direction, asset or withdrawal mode. */}
        <div key={`${direction}-${asset}-${isFast ? "fast" : "standard"}`}>
          {isFast ? (
            <FastOrderStep
              direction={direction}
              account={account}
              asset={asset}
              amount={amount}
              disabledReason={disabledReason}
              intents={intents}
              challengePeriod={challengePeriod.data}
              onOpened={() => amountInput.setText("")}
            />
          ) : isDeposit ? (
            <>
              {showApproval && (
                <>
                  <p className="hint">Step 1 of 2: allow the L1 bridge to move {formatAmount(amount)} of your primary token.</p>
                  <TxButton
                    chainId={chains.l1.id}
                    variant="secondary"
                    disabled={!needsApproval}
                    disabledReason="Approved: the bridge may move this amount."
                    onMined={() => setApproved(amount)}
                    send={() =>
                      writeChecked(wagmiConfig, {
                        address: config.contracts.l1.PrimaryToken,
                        abi: primaryTokenAbi,
                        functionName: "approve",
                        args: [l1Bridge, amount],
                        chainId: chains.l1.id,
                        account: account!,
                      })
                    }
                  >
                    Approve
                  </TxButton>
                </>
              )}
              <TxButton
                chainId={chains.l1.id}
                send={sendDeposit}
                onMined={(receipt) => setDeposit({ receipt, description: sentDescription.current })}
                disabled={disabledReason !== undefined || needsApproval || (asset === "token" && allowance.data === undefined)}
                disabledReason={
                  disabledReason ??
                  (needsApproval
                    ? "Approve the bridge first."
                    : allowance.error !== null
                      ? "Could not read the bridge's allowance."
                      : "Checking the bridge's allowance…")
                }
              >
                Deposit
              </TxButton>
            </>
          ) : (
            <TxButton chainId={chains.l2.id} send={sendWithdrawal} disabled={disabledReason !== undefined} disabledReason={disabledReason}>
              Withdraw
            </TxButton>
          )}
        </div>
      </form>
      {deposit !== undefined && (
        <DepositProgress key={deposit.receipt.transactionHash} l1Receipt={deposit.receipt} description={deposit.description} />
      )}
    </>
  );
}

function Radio({
  name,
  id,
  checked,
  onChange,
  label,
}: {
  name: string;
  id: string;
  checked: boolean;
  onChange: () => void;
  label: string;
}) {
  return (
    <label htmlFor={id}>
      <input type="radio" name={name} id={id} checked={checked} onChange={onChange} /> {label}
    </label>
  );
}
