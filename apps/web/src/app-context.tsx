import { createContext, useContext, type ReactNode } from "react";

import type { AppChains } from "./config/chains";
import type { NetworkConfig } from "@avn/protocol/network-config";

export interface AppSettings {
  config: NetworkConfig;
  chains: AppChains;
}

const AppContext = createContext<AppSettings | undefined>(undefined);

export function AppSettingsProvider({ value, children }: { value: AppSettings; children: ReactNode }) {
  return <AppContext.Provider value={value}>{children}</AppContext.Provider>;
}

/** The deployment the app runs against: its configuration, chains and contract addresses. */
export function useAppSettings(): AppSettings {
  const settings = useContext(AppContext);
  if (settings === undefined) throw new Error("useAppSettings outside AppSettingsProvider");
  return settings;
}
