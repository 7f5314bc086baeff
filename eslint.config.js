// ESLint for every TypeScript file of the repository, with type information (typescript-eslint's project
// service finds each file's tsconfig). The rules that matter most here are the promise rules: the services
// start many background tasks, and a promise nobody awaits or catches is a crash or a lost error.
import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

import { layerRules } from "./eslint.layers.mjs";

export default tseslint.config(
  {
    ignores: [
      "artifacts/**",
      "cache/**",
      "coverage/**",
      "typechain-types/**",
      "node_modules/**",
      ".node/**",
      ".devnet/**",
      "apps/web/dist/**",
      "apps/web/src/generated/**",
      "deploy/deployments/**",
      "test-results/**",
      ".scratch/**",
      "types/**",
      "packages/sdk/dist/**",
      ".kit/**",
      // A Hardhat project of its own, outside the workspaces, installed from the kit's tarballs: its test
      // (test/ts/e2e/kit-suite.ts) installs, compiles and runs it as an integrator would.
      "examples/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // Every relative import names the file as it is on disk (`.ts`): plain Node (type stripping), Hardhat
      // and Vite all run it, so one spelling works everywhere and nobody has to know which runner runs a file.
      "no-restricted-imports": ["error", { patterns: [{ regex: "^\\.{1,2}/.*\\.js$", message: "Import the .ts file itself." }] }],
      // A variable a closure reads before its one assignment (a callback wired before the object it
      // wakes exists) must stay `let`.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      // A function that implements a promise-returning interface (a route handler, an injected reader) is
      // declared async so that what it throws becomes a rejection, with or without an await inside.
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  {
    // Tests read JSON answers and ABI results as loosely typed values on purpose: asserting on them is
    // the check. Network helpers are destructured from their object, which typescript-eslint cannot see
    // is safe (they are bound functions).
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/unbound-method": "off",
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ["apps/web/src/**/*.{ts,tsx}"],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { "react-hooks": reactHooks },
    // The classic rules of hooks. The React Compiler's rules (refs, purity, effects) are not adopted: the
    // app is not compiled by it, and they would forbid patterns it relies on knowingly.
    rules: { "react-hooks/rules-of-hooks": "error", "react-hooks/exhaustive-deps": "error" },
  },
  ...layerRules,
  prettier,
);
