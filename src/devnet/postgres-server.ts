import { spawn, spawnSync, type SpawnOptions } from "node:child_process";
import { chownSync, existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import pg from "pg";

import { freePort } from "../common/free-port.ts";

/** A PostgreSQL server of its own, for the tests and the benchmarks (the key database of several API processes). */
export interface PostgresServer {
  /** `postgres://…` of a fresh, empty database on the server. */
  createDatabase(): Promise<string>;
  /**
   * A fast shutdown (clients disconnected), `whileDown` (if given) while nothing listens, and a start again
   * on the same port and data: what a restarted database looks like to its clients (`npm run chaos`).
   * Resolves once it accepts connections again.
   */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  stop(): Promise<void>;
}

/** The newest Debian PostgreSQL server's bin folder, or undefined. */
function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(path.join(root, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : path.join(root, versions[0], "bin");
}

/** PostgreSQL refuses to run as root: as root, run it as the `postgres` user the Debian package creates. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
  const uid = id("-u");
  const gid = id("-g");
  if (!Number.isInteger(uid) || uid <= 0) throw new Error("running as root and no postgres user to run the server as");
  return { uid, gid };
}

/**
 * A throwaway PostgreSQL cluster (Debian's server binaries) in a temporary directory on a free port, or
 * undefined when the machine has no PostgreSQL server. Trust authentication on 127.0.0.1 only.
 */
export async function startPostgresServer(): Promise<PostgresServer | undefined> {
  const bin = postgresBin();
  if (bin === undefined) return undefined;
  const user = serverUser();
  const dir = await mkdtemp(path.join(tmpdir(), "avn-postgres-"));
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, "data");
  const asServer: SpawnOptions = user === undefined ? {} : { uid: user.uid, gid: user.gid };
  const init = spawnSync(path.join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"], {
    ...asServer,
    encoding: "utf8",
  });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const launch = async () => {
    const started = spawn(
      path.join(bin, "postgres"),
      [
        "-D",
        data,
        "-p",
        String(port),
        "-h",
        "127.0.0.1",
        "-k",
        dir,
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "full_page_writes=off",
      ],
      { ...asServer, stdio: "ignore" },
    );
    const exited = new Promise<void>((resolve) => started.once("exit", () => resolve()));
    for (let attempt = 0; ; attempt += 1) {
      const client = new pg.Client({ connectionString: adminUrl });
      try {
        await client.connect();
        await client.end();
        return { process: started, exited };
      } catch (error) {
        await client.end().catch(() => undefined);
        if (attempt >= 200 || started.exitCode !== null) {
          started.kill("SIGKILL");
          throw new Error(`PostgreSQL did not start: ${(error as Error).message}`, { cause: error });
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let server = await launch();
  const killOnExit = () => server.process.kill("SIGKILL");
  process.once("exit", killOnExit);
  // SIGINT: "fast" shutdown, disconnecting clients.
  const shutDown = async () => {
    server.process.kill("SIGINT");
    await server.exited;
  };
  let databases = 0;
  return {
    async createDatabase() {
      databases += 1;
      const name = `avn_test_${databases}`;
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async restart(whileDown) {
      await shutDown();
      try {
        await whileDown?.();
      } finally {
        server = await launch();
      }
    },
    async stop() {
      process.off("exit", killOnExit);
      await shutDown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
