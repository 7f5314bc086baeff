/**
 * The network's mark: a hexagon (a node of the network) holding a check (a verified asset), in the theme's
 * accent. Decorative: the brand's name is written beside it. `public/favicon.svg` is the same drawing.
 */
export function Logo() {
  return (
    <svg className="logo" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <path className="logo-shape" d="M16 1.5 28.6 8.75v14.5L16 30.5 3.4 23.25V8.75Z" />
      <path className="logo-mark" d="m10 16.5 4.2 4.2L22.5 12" fill="none" strokeWidth="3.2" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
