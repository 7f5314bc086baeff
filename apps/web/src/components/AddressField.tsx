import type { ReactNode } from "react";

/**
 * A labelled text field for an address as the user types or pastes it: no autocomplete or spell check,
 * a hint beneath, and the parser's `problem` shown as an alert and marked on the field. What follows the
 * field in its group (warnings, the button that uses the address) comes as children.
 */
export function AddressField(props: {
  id: string;
  label: string;
  hint: ReactNode;
  value: string;
  onChange: (value: string) => void;
  problem: string | undefined;
  children?: ReactNode;
}) {
  const { id, label, hint, value, onChange, problem, children } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        placeholder="0x…"
        autoComplete="off"
        spellCheck={false}
        aria-invalid={problem !== undefined}
        aria-describedby={`${id}-hint`}
      />
      <p className="hint" id={`${id}-hint`}>
        {hint}
      </p>
      {problem !== undefined && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {children}
    </div>
  );
}
