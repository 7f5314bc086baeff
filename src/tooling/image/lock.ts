// One image build at a time on a machine: `npm test` builds the image in a lane of its own while the end-to-end
// test may ask for it too, and two builds at once would each do all the work (and race to make the base).
import { open, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** Whether the process `pid` still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Runs `work` holding the machine-wide lock `name` (a file in the temporary folder holding the holder's pid;
 * a holder that died leaves a lock that is taken over). `onWait` is told once when another process holds it.
 */
export async function withMachineLock<T>(name: string, work: () => Promise<T>, onWait?: (holder: number) => void): Promise<T> {
  const file = path.join(tmpdir(), `avn-${name}.lock`);
  let told = false;
  for (;;) {
    try {
      const handle = await open(file, "wx");
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number((await readFile(file, "utf8").catch(() => "")).trim());
      if (!Number.isInteger(holder) || holder <= 0 || !alive(holder)) {
        // Written a moment ago (no pid yet) or left by a process that died: look again, then take it over.
        await new Promise((resolve) => setTimeout(resolve, 500));
        const again = Number((await readFile(file, "utf8").catch(() => "")).trim());
        if (again === holder || !alive(again)) await rm(file, { force: true });
        continue;
      }
      if (!told) onWait?.(holder);
      told = true;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  try {
    return await work();
  } finally {
    await rm(file, { force: true });
  }
}
