// Types of eslint.layers.mjs for the TypeScript that imports it (the layering test).
import type { Linter } from "eslint";

export declare const LAYERS: string[][];
export declare const SIBLING_PAIRS: Array<{ from: string; to: string; why: string }>;
export declare const layerRules: Linter.Config[];
