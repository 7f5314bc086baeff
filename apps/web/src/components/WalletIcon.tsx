import "./wallet.css";

/** A wallet's EIP-6963 icon (a data URI), or its initial in a square of the same size: nothing moves when it loads. */
export function WalletIcon({ icon, name, size = 20 }: { icon: string | undefined; name: string; size?: 20 | 28 }) {
  if (icon !== undefined && icon !== "") return <img className="wallet-icon" src={icon} alt="" width={size} height={size} />;
  return (
    <span className={`wallet-icon wallet-icon-blank wallet-icon-${size}`} aria-hidden="true">
      {name.slice(0, 1).toUpperCase()}
    </span>
  );
}
