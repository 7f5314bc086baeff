// `npm run keys -- create <name> [--quota N] | list | revoke <id> | quota <id> <N|none> | usage [<id>]`:
// manages the API's keys in API_KEYS_DB (default .data/api-keys.sqlite, or postgres://…). Keys are
// stored as hashes and shown once, at creation.
import path from "node:path";

import { runKeysCli } from "../src/api/keys/cli.ts";

const database = process.env.API_KEYS_DB ?? path.resolve(import.meta.dirname, "..", ".data", "api-keys.sqlite");
process.exitCode = await runKeysCli(process.argv.slice(2), database, { print: console.log, printError: console.error });
