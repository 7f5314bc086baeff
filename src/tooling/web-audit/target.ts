// Which web app the audit opens: the one `--url` names, else the running stack's (`stack.web.url` in
// `.devnet/stack.json`, which exists only while `npm start` runs).
import { readStackFile, type StackFile } from "../../common/stack-file.ts";
import { baseUrlOf } from "./arguments.ts";
import { WebAuditError } from "./errors.ts";

/** The base URL to audit: `url` when given, else the web app of the stack whose file is `stackFile`. */
export async function resolveBaseUrl(url: string | undefined, stackFile: string): Promise<string> {
  if (url !== undefined) return baseUrlOf(url);
  let stack: StackFile;
  try {
    stack = await readStackFile(stackFile);
  } catch {
    throw new WebAuditError(
      "NO_STACK",
      `No running stack found (${stackFile}): start one with \`npm start\`, or name the web app with --url <base URL>.`,
    );
  }
  if (stack.web?.url === undefined)
    throw new WebAuditError(
      "NO_STACK",
      "The running stack serves no web app (started with `npm run devnet`?): use `npm start`, or name the web app with --url <base URL>.",
    );
  return baseUrlOf(stack.web.url);
}
