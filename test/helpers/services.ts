// What a test does when a service it needs (a binary such as redis-server, PostgreSQL's server or Chromium)
// is missing from the machine. Under CI (`CI=true`, as CI systems set it and `.ci/run` sets it when unset)
// the test fails, naming what to install: CI must not pass while tests silently did not run. Elsewhere the
// test is skipped, saying so, and the skip is recorded (test, service, how to install) in the file named by
// AVN_SKIPPED_TESTS_FILE, which `npm test`'s runner (scripts/test-phases.mjs) sets and sums up at the end.
import { appendFileSync } from "node:fs";

/** A service some tests need, as `requireService` reports it missing. */
export interface RequiredService {
  /** What it is called, e.g. "chromium". */
  readonly name: string;
  /** What is wrong, following the name: "not installed", "not installed at /usr/bin/chromium". */
  readonly missing: string;
  /** How to install it: "apt-get install chromium". */
  readonly install: string;
}

/** One skip as recorded in AVN_SKIPPED_TESTS_FILE (one JSON object per line). */
export interface SkipRecord extends RequiredService {
  /** The skipped test's full title, or the suite's when a `before` hook skipped all of its tests. */
  readonly title: string;
  /** How many tests the skip covers: 1 for a test, all of the suite's for a `before` hook. */
  readonly tests: number;
}

/** The environment variable naming the file skips are appended to. */
export const SKIPPED_TESTS_FILE_VARIABLE = "AVN_SKIPPED_TESTS_FILE";

/**
 * The part of mocha's `this` (in a test or a hook) that `requireService` uses: mocha's Context fits it, and
 * so does a plain object in a test of this helper.
 */
export interface SkippableContext {
  skip(): never;
  test?: { title: string; fullTitle(): string; type?: string; parent?: { fullTitle(): string; total(): number } } | undefined;
}

/** Whether the environment is CI's: `CI` set to anything but "", "0" or "false". */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
}

/** The error a test fails with under CI when `service` is missing. */
export class MissingServiceError extends Error {
  readonly service: RequiredService;
  constructor(service: RequiredService, title: string) {
    super(
      `${service.name} ${service.missing}: under CI (CI=true) a test that needs it fails instead of skipping. Install it: ${service.install}. (${title})`,
    );
    this.name = "MissingServiceError";
    this.service = service;
  }
}

/**
 * Call where a test or a `before` hook finds `service` missing (`context` is mocha's `this`). Under CI it
 * throws a MissingServiceError naming what to install; elsewhere it records the skip and skips the test
 * (in a `before` hook: every test of the suite). It never returns.
 */
export function requireService(context: SkippableContext, service: RequiredService, env: NodeJS.ProcessEnv = process.env): never {
  const runnable = context.test;
  // A hook's skip covers its suite: mocha marks every test of it pending.
  const suite = runnable?.type === "hook" ? runnable.parent : undefined;
  const title = suite?.fullTitle() ?? runnable?.fullTitle() ?? "(unknown test)";
  if (isCi(env)) throw new MissingServiceError(service, title);
  const tests = suite?.total() ?? 1;
  console.log(`      (skipped: ${service.name} ${service.missing}; install it: ${service.install}; under CI=true this fails)`);
  const file = env[SKIPPED_TESTS_FILE_VARIABLE];
  if (file !== undefined && file !== "") {
    const record: SkipRecord = { title, tests, name: service.name, missing: service.missing, install: service.install };
    appendFileSync(file, `${JSON.stringify(record)}\n`);
  }
  context.skip();
}
