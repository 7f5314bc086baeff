import { useEffect } from "react";

/**
 * Calls `onShown` once it is on screen: how a section of the Network page says that its content has come, so
 * that the page shows the sections below it (NetworkPage.tsx).
 */
export function Shown({ onShown }: { onShown: () => void }) {
  useEffect(() => onShown(), [onShown]);
  return null;
}
