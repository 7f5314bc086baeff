import { useEffect, useRef, type RefObject } from "react";

/** Whether `target` lies outside every one of `inside` (no target at all counts as outside). */
export function outside(target: EventTarget | null, ...inside: Array<HTMLElement | null>): boolean {
  return !(target instanceof Node) || !inside.some((element) => element?.contains(target) === true);
}

/**
 * Closes a panel opened from a button (a disclosure: the site menu, the account panel) the two ways people
 * expect: Escape (`"key"`: the focus goes back to the button) and a pointer pressed outside both the panel and
 * its button (`"outside"`: the focus goes where the pointer went). The document is listened to while `active`.
 */
export function useDismiss(
  active: boolean,
  panel: RefObject<HTMLElement | null>,
  trigger: RefObject<HTMLElement | null>,
  onDismiss: (how: "key" | "outside") => void,
): void {
  // Read by the document's listeners, which are added once per opening.
  const dismiss = useRef(onDismiss);
  useEffect(() => {
    dismiss.current = onDismiss;
  });
  useEffect(() => {
    if (!active) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      event.preventDefault();
      dismiss.current("key");
    };
    const onPointerDown = (event: PointerEvent) => {
      if (outside(event.target, panel.current, trigger.current)) dismiss.current("outside");
    };
    document.addEventListener("keydown", onKeyDown);
    document.addEventListener("pointerdown", onPointerDown);
    return () => {
      document.removeEventListener("keydown", onKeyDown);
      document.removeEventListener("pointerdown", onPointerDown);
    };
  }, [active, panel, trigger]);
}
