// `npm run keys -- create <name> | list | revoke <id>`: manages the API's keys in API_KEYS_DB
// (default .data/api-keys.sqlite). Keys are stored as hashes and shown once, at creation.
import path from "node:path";

import { runKeysCli } from "../src/api/keys/cli.ts";

const database = process.env.API_KEYS_DB ?? path.resolve(import.meta.dirname, "..", ".data", "api-keys.sqlite");
process.exitCode = runKeysCli(process.argv.slice(2), database, console.log, console.error);
