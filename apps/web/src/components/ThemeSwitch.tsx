import { useEffect, useState } from "react";

export type Theme = "system" | "light" | "dark";

const THEMES: ReadonlyArray<{ value: Theme; label: string }> = [
  { value: "system", label: "System" },
  { value: "light", label: "Light" },
  { value: "dark", label: "Dark" },
];

/** Where the choice is kept; index.html's inline script reads the same key to apply it before the first paint. */
export const THEME_STORAGE_KEY = "avn-theme";

/** The stored choice: "light" or "dark", else the system's preference (nothing stored, or storage refused). */
export function storedTheme(): Theme {
  try {
    const value = localStorage.getItem(THEME_STORAGE_KEY);
    return value === "light" || value === "dark" ? value : "system";
  } catch {
    return "system";
  }
}

/** Sets `data-theme` on <html> (styles.css picks the light or dark tokens by it); none follows the system. */
export function applyTheme(theme: Theme): void {
  const root = document.documentElement;
  if (theme === "system") delete root.dataset.theme;
  else root.dataset.theme = theme;
}

/**
 * System / Light / Dark, as radio buttons drawn as one segmented control. The choice is applied at once,
 * remembered in localStorage and followed by the app's other tabs.
 */
export function ThemeSwitch() {
  const [theme, setTheme] = useState<Theme>(storedTheme);

  // Applied here too, in case the inline script could not run (a stricter policy, a script blocker).
  useEffect(() => applyTheme(theme), [theme]);

  useEffect(() => {
    const onStorage = (event: StorageEvent) => {
      if (event.key === THEME_STORAGE_KEY || event.key === null) setTheme(storedTheme());
    };
    window.addEventListener("storage", onStorage);
    return () => window.removeEventListener("storage", onStorage);
  }, []);

  const choose = (next: Theme) => {
    setTheme(next);
    try {
      if (next === "system") localStorage.removeItem(THEME_STORAGE_KEY);
      else localStorage.setItem(THEME_STORAGE_KEY, next);
    } catch {
      // Storage refused (a private window's policy): the choice holds for this page only.
    }
  };

  return (
    <fieldset className="theme-switch">
      <legend>Theme</legend>
      <div className="theme-options">
        {THEMES.map((option) => (
          <label key={option.value}>
            <input
              type="radio"
              name="avn-theme"
              value={option.value}
              checked={theme === option.value}
              onChange={() => choose(option.value)}
            />
            {option.label}
          </label>
        ))}
      </div>
    </fieldset>
  );
}
