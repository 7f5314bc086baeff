import { parseArgs } from "node:util";

import { UsageStore } from "../usage/usage-store.ts";
import { ApiKeys, type ApiKeyRecord } from "./api-keys.ts";
import { AvnError } from "@avn/protocol/errors";

const USAGE = `Usage: npm run keys -- <command>
  create <name> [--quota <requests per month>]   create a key (shown once)
  list                                            id, creation time, state, monthly quota, name
  revoke <id>                                     refuse the key from now on (every API process within a second)
  quota <id> <requests per month | none>          set or remove a key's monthly quota
  usage [<id>] [--from <YYYY-MM-DD>]              requests per day, endpoint and status class (default: this month)`;

export interface KeysCliOutput {
  print: (line: string) => void;
  printError: (line: string) => void;
  /** The clock, for the default month of `usage`. */
  now?: () => Date;
}

/** A quota argument: a whole number of requests, or `none`. */
function parseQuota(text: string | undefined): number | null {
  if (text === undefined) throw new AvnError("KEYS_USAGE", "a quota is required");
  if (text === "none") return null;
  if (!/^\d{1,15}$/.test(text)) throw new AvnError("KEYS_USAGE", `not a quota: ${text} (a whole number of requests per month, or none)`);
  return Number(text);
}

const quotaText = (quota: number | null) => (quota === null ? "no quota" : `${quota.toLocaleString("en-US")}/month`);

/** `npm run keys -- …` against the key database at `location` (a file or `postgres://…`); returns the exit code. */
export async function runKeysCli(args: string[], location: string, output: KeysCliOutput): Promise<number> {
  const { print, printError } = output;
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options: { quota: { type: "string" }, from: { type: "string" } } });
  } catch (error) {
    printError(`${(error as Error).message}\n${USAGE}`);
    return 1;
  }
  const [command, argument, extra] = parsed.positionals;
  let keys: ApiKeys | undefined;
  try {
    keys = await ApiKeys.open(location);
    switch (command) {
      case "create": {
        if (argument === undefined || extra !== undefined) break;
        const monthlyQuota = parsed.values.quota === undefined ? null : parseQuota(parsed.values.quota);
        const { record, key } = await keys.create(argument, { monthlyQuota });
        print(`Created key ${record.id} (${record.name}, ${quotaText(record.monthlyQuota)}). The key, shown this once only:\n\n  ${key}\n`);
        return 0;
      }
      case "list":
        if (argument !== undefined) break;
        for (const key of await keys.list()) print(listLine(key));
        return 0;
      case "revoke":
        if (argument === undefined || extra !== undefined) break;
        if (!(await keys.revoke(argument))) {
          printError(`No live key with id ${argument}`);
          return 1;
        }
        print(`Revoked key ${argument}`);
        return 0;
      case "quota": {
        if (argument === undefined) break;
        const quota = parseQuota(extra);
        if (!(await keys.setMonthlyQuota(argument, quota))) {
          printError(`No live key with id ${argument}`);
          return 1;
        }
        print(`Key ${argument}: ${quotaText(quota)}`);
        return 0;
      }
      case "usage": {
        if (extra !== undefined) break;
        const from = parsed.values.from ?? `${(output.now?.() ?? new Date()).toISOString().slice(0, 7)}-01`;
        if (!/^\d{4}-\d{2}-\d{2}$/.test(from)) throw new AvnError("KEYS_USAGE", `not a day: ${from} (YYYY-MM-DD)`);
        const names = new Map((await keys.list()).map((key) => [key.id, key.name]));
        if (argument !== undefined && !names.has(argument)) {
          printError(`No key with id ${argument}`);
          return 1;
        }
        const rows = await new UsageStore(keys.db).report({ keyId: argument, fromDay: from });
        print(`Requests since ${from} (UTC days; counted by the API processes, written every few seconds):`);
        if (rows.length === 0) print("  none");
        for (const row of rows) {
          print(
            `${row.day}  ${row.keyId}  ${row.endpoint.padEnd(20)}  ${row.statusClass}  ${String(row.requests).padStart(10)}  ${names.get(row.keyId) ?? ""}`,
          );
        }
        const total = rows.reduce((sum, row) => sum + row.requests, 0);
        print(`Total: ${total} request(s)`);
        return 0;
      }
    }
    printError(USAGE);
    return 1;
  } catch (error) {
    printError(`error: ${(error as Error).message}`);
    return 1;
  } finally {
    await keys?.close();
  }
}

function listLine(key: ApiKeyRecord): string {
  return `${key.id}  ${key.createdAt}  ${key.revokedAt === null ? "live   " : "revoked"}  ${quotaText(key.monthlyQuota).padEnd(18)}  ${key.name}`;
}
