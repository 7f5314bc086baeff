import { parseArgs } from "node:util";

import { isAddress } from "ethers";

import { readStackFile, stackFilePath } from "../common/stack-file.ts";
import { chargeRefunded, checkoutCompleted, dispute, newPayment, postWebhook } from "./stripe-simulator.ts";

const USAGE = `Usage: npm run credits:stripe -- <command> [options]

Sends the local credits service what Stripe would send (events signed with the webhook's secret, as
\`stripe trigger\` does), for the running local stack (.devnet/stack.json), in the service's currency
and at its rate of credits per cent.

Commands:
  purchase --account <wallet> --credits <n>          a paid checkout crediting the claim account
  refund   --payment <pi_…> --credits <n>            the payment's refunded total is now <n> credits
  dispute  --payment <pi_…> --credits <n> --id <dp_…> [--close won|lost]
                                                     a dispute opened, or closed`;

export interface StripeCliContext {
  projectRoot: string;
  print: (line: string) => void;
  printError: (line: string) => void;
}

/** The local Stripe stand-in: parses `args`, sends one event, returns the exit code. */
export async function runStripeCli(args: string[], context: StripeCliContext): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        account: { type: "string" },
        credits: { type: "string" },
        payment: { type: "string" },
        id: { type: "string" },
        close: { type: "string" },
      },
    });
  } catch (error) {
    context.printError(`${(error as Error).message}\n\n${USAGE}`);
    return 1;
  }
  const [command] = parsed.positionals;
  const { values } = parsed;
  const credits = Number(values.credits);
  const fail = (message: string) => {
    context.printError(`error: ${message}`);
    return 1;
  };
  if (command === undefined) {
    context.print(USAGE);
    return 0;
  }
  if (!Number.isSafeInteger(credits) || credits < 0) return fail("--credits takes a whole number of credits");
  const stack = await readStackFile(stackFilePath(context.projectRoot)).catch(() => undefined);
  if (stack?.credits === undefined) return fail("no local stack with a credits service is running: start one with `npm start`");
  const { webhookUrl, webhookSecret } = stack.credits;
  let terms: { currency: string; creditsPerMinorUnit: number };
  try {
    terms = (await (await fetch(`${stack.credits.url}/credits/catalogue`)).json()) as typeof terms;
  } catch {
    return fail(`the credits service at ${stack.credits.url} does not answer: is the local stack still running?`);
  }
  const { currency, creditsPerMinorUnit } = terms;
  if (credits % creditsPerMinorUnit !== 0) return fail(`--credits must be a whole multiple of ${creditsPerMinorUnit} (credits per cent)`);
  const amountMinor = credits / creditsPerMinorUnit;
  const payment = values.payment === undefined ? newPayment() : { paymentIntent: values.payment, checkoutSession: "" };
  let body;
  if (command === "purchase") {
    if (values.account === undefined || !isAddress(values.account)) return fail("--account takes the wallet address the credits are for");
    body = checkoutCompleted({ payment, account: values.account, amountMinor, currency });
  } else if (command === "refund" || command === "dispute") {
    if (values.payment === undefined) return fail("--payment takes the payment intent id a purchase printed (pi_…)");
    if (command === "refund") body = chargeRefunded({ payment, amountMinor, refundedMinor: amountMinor, currency });
    else {
      if (values.id === undefined) return fail("--id names the dispute (dp_…)");
      if (values.close !== undefined && values.close !== "won" && values.close !== "lost") return fail("--close is won or lost");
      body = dispute({ payment, disputeId: values.id, amountMinor, currency, closed: values.close });
    }
  } else {
    return fail(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
  }
  const answer = await postWebhook(webhookUrl, body, webhookSecret);
  if (answer.status !== 200) return fail(`the credits service answered ${answer.status}: ${String(answer.body.message)}`);
  context.print(
    `${body.type} ${body.id} (payment ${payment.paymentIntent}): ${String(answer.body.outcome)}${answer.body.duplicate === true ? " (a replay)" : ""}`,
  );
  return 0;
}
