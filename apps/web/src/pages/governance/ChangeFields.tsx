import { CHANGE_KINDS, currentAndBounds, type ChangeDraft, type ChangeKind, type L2Rules } from "./change-drafts";

/** One change of a proposal: its kind, its value where it takes one (with the present value and the bounds), and Remove. */
export function ChangeFields({
  draft,
  position,
  rules,
  problem,
  onChange,
  onRemove,
}: {
  draft: ChangeDraft;
  /** 1-based, as the labels say it. */
  position: number;
  rules: L2Rules | undefined;
  problem: string | undefined;
  onChange: (draft: ChangeDraft) => void;
  onRemove: () => void;
}) {
  const id = `change-${draft.key}`;
  const valueLabel = CHANGE_KINDS[draft.kind].value;
  const hint = rules === undefined ? undefined : currentAndBounds(draft.kind, rules);
  return (
    <fieldset className="change" data-testid="change">
      <legend>Change {position}</legend>
      <label htmlFor={`${id}-kind`}>Change {position}: what to change</label>
      <select
        id={`${id}-kind`}
        value={draft.kind}
        onChange={(event) => onChange({ ...draft, kind: event.target.value as ChangeKind, text: "" })}
      >
        {(Object.keys(CHANGE_KINDS) as ChangeKind[]).map((kind) => (
          <option key={kind} value={kind}>
            {CHANGE_KINDS[kind].label}
          </option>
        ))}
      </select>
      {valueLabel !== undefined && (
        <>
          <label htmlFor={`${id}-value`}>
            Change {position}: {valueLabel}
          </label>
          <input
            id={`${id}-value`}
            inputMode={draft.kind === "set-request-fee" ? "decimal" : "numeric"}
            autoComplete="off"
            value={draft.text}
            onChange={(event) => onChange({ ...draft, text: event.target.value })}
            aria-invalid={problem !== undefined && draft.text !== ""}
            aria-describedby={`${id}-hint ${id}-problem`}
          />
        </>
      )}
      <p className="hint" id={`${id}-hint`}>
        {hint ?? "Reading the present value from L2…"}
      </p>
      {/* An empty field is not yet a mistake: its problem is said only by the Propose button's reason. */}
      {problem !== undefined && (valueLabel === undefined || draft.text !== "") && (
        <p className="error" id={`${id}-problem`}>
          {problem}
        </p>
      )}
      <button type="button" className="secondary" onClick={onRemove}>
        Remove change {position}
      </button>
    </fieldset>
  );
}
