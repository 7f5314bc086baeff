import { useState, type ReactNode } from "react";

import { amountText, readAmount, type AmountReading, type AmountRules } from "../lib/amounts";

/** An amount field's state: the text as typed and what it reads as under the form's rules (`readAmount`). */
export type AmountInput = AmountReading & {
  text: string;
  setText: (text: string) => void;
  rules: AmountRules;
};

/**
 * The state of an `AmountField`, read again on every render, so that a rule that changes on its own (a
 * balance arriving or moving) is applied to what is already typed. The form uses `value` (undefined while
 * the field is empty or wrong) and `error`; `setText("")` clears the field once its transaction is mined.
 */
export function useAmountInput(rules: AmountRules, initialText = ""): AmountInput {
  const [text, setText] = useState(initialText);
  return { ...readAmount(text, rules), text, setText, rules };
}

export interface AmountFieldProps {
  id: string;
  label: string;
  amount: AmountInput;
  /** Said under the field (and read with it): what the amount does, the balance, the price. */
  hint?: ReactNode;
  /** The hint's element: its id (`<id>-hint` unless given), test id, and whether it is announced as it changes. */
  hintProps?: { id?: string; "data-testid"?: string; "aria-live"?: "polite" };
  /** A "Max" button that fills in the rules' `max` (the balance); disabled until it is known, and when it is zero. */
  withMax?: boolean;
}

/**
 * A labelled amount in whole units of a token: a text field with the decimal keypad (the numeric one for
 * whole units), the reading's error said beneath it and tied to it (`aria-invalid`, `aria-describedby`),
 * and, where the form offers it, "Max". An empty field is not yet a mistake: the form's button says what
 * is missing.
 */
export function AmountField({ id, label, amount, hint, hintProps, withMax = false }: AmountFieldProps) {
  const hintId = hintProps?.id ?? `${id}-hint`;
  const errorId = `${id}-error`;
  const { max, decimals } = amount.rules;
  const describedBy = [hint === undefined ? undefined : hintId, amount.error === undefined ? undefined : errorId].filter(Boolean).join(" ");
  const input = (
    <input
      id={id}
      type="text"
      inputMode={decimals === 0 ? "numeric" : "decimal"}
      autoComplete="off"
      spellCheck={false}
      value={amount.text}
      onChange={(event) => amount.setText(event.target.value)}
      aria-invalid={amount.error !== undefined}
      aria-describedby={describedBy === "" ? undefined : describedBy}
    />
  );
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {withMax ? (
        <div className="amount-input">
          {input}
          <button
            type="button"
            className="secondary"
            disabled={max === undefined || max === 0n}
            onClick={() => amount.setText(amountText(max!, decimals))}
          >
            Max
          </button>
        </div>
      ) : (
        input
      )}
      {hint !== undefined && (
        <p className="hint" {...hintProps} id={hintId}>
          {hint}
        </p>
      )}
      {amount.error !== undefined && (
        <p className="error" id={errorId}>
          {amount.error}
        </p>
      )}
    </div>
  );
}
