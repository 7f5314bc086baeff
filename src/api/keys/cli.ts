import { ApiKeyStore } from "./key-store.ts";

/** `npm run keys -- create <name> | list | revoke <id>`; returns the exit code. */
export function runKeysCli(args: string[], databaseFile: string, print: (line: string) => void, printError: (line: string) => void): number {
  const [command, argument] = args;
  const store = new ApiKeyStore(databaseFile);
  try {
    switch (command) {
      case "create": {
        if (argument === undefined) break;
        const { record, key } = store.create(argument);
        print(`Created key ${record.id} (${record.name}). The key, shown this once only:\n\n  ${key}\n`);
        return 0;
      }
      case "list":
        for (const key of store.list()) print(`${key.id}  ${key.createdAt}  ${key.revokedAt === null ? "live   " : "revoked"}  ${key.name}`);
        return 0;
      case "revoke":
        if (argument === undefined) break;
        if (!store.revoke(argument)) {
          printError(`No live key with id ${argument}`);
          return 1;
        }
        print(`Revoked key ${argument}`);
        return 0;
    }
    printError("Usage: npm run keys -- create <name> | list | revoke <id>");
    return 1;
  } catch (error) {
    printError(`error: ${(error as Error).message}`);
    return 1;
  } finally {
    store.close();
  }
}
