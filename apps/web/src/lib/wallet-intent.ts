/**
 * Asks the header's wallet control (ConnectWallet.tsx) to open the list of wallets, from elsewhere: a page's
 * Connect button in place of a transaction's (TxButton.tsx), or the shell's early button, drawn at once while
 * the wallet code loads (App.tsx). A request made before the control is there is kept and carried out by it
 * once mounted, which also takes the focus if the early button had it, so neither the click nor the keyboard's
 * place is lost in the swap.
 */
let pending = { open: false, focus: false };
let openList: (() => void) | undefined;

/** Opens the wallet list now, or as soon as the header's control is there. */
export function requestWalletList(): void {
  if (openList !== undefined) openList();
  else pending = { open: true, focus: true };
}

/** The header's control opens the list on requests from now on; the function returned stops it. */
export function onWalletListRequest(open: () => void): () => void {
  openList = open;
  return () => {
    if (openList === open) openList = undefined;
  };
}

/** The early button had the focus when it was replaced. */
export function noteWalletButtonFocus(focused: boolean): void {
  pending = { ...pending, focus: focused };
}

/** What the working button must do on mount; asked once. */
export function takeWalletIntent(): { open: boolean; focus: boolean } {
  const taken = pending;
  pending = { open: false, focus: false };
  return taken;
}
