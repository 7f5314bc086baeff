import { AvnError } from "@avn/protocol/errors";
import { isAddress } from "ethers";

import { runCli, type Cli, type CliContext, type CliOption, type CliValues } from "../common/cli.ts";
import { readStackFile, stackFilePath } from "../common/stack-file.ts";
import { CreditsError } from "./errors.ts";
import { chargeRefunded, checkoutCompleted, dispute, newPayment, postWebhook, type SimulatedPayment } from "./stripe-simulator.ts";

export interface StripeCliContext extends CliContext {
  projectRoot: string;
}

const OPTIONS = {
  account: { type: "string", value: "<wallet>", description: "the wallet address the credits are for" },
  credits: { type: "string", value: "<n>", description: "a whole number of credits" },
  payment: { type: "string", value: "<pi_…>", description: "the payment intent id a purchase printed (pi_…)" },
  id: { type: "string", value: "<dp_…>", description: "the dispute's id (dp_…)" },
  close: { type: "string", choices: ["won", "lost"], description: "the dispute is closed, won or lost (else it is opened)" },
} as const satisfies Record<string, CliOption>;

type Values = CliValues<typeof OPTIONS>;

const STRIPE_CLI: Cli<typeof OPTIONS, StripeCliContext> = {
  invocation: "npm run credits:stripe --",
  about: `Sends the local credits service what Stripe would send (events signed with the webhook's secret, as
\`stripe trigger\` does), for the running local stack (.devnet/stack.json), in the service's currency
and at its rate of credits per cent.`,
  usageCode: "INVALID_INPUT",
  // Its refusals were always `error: message`, and its tests hold them so.
  printCodes: false,
  options: OPTIONS,
  commands: {
    purchase: {
      summary: "a paid checkout crediting the claim account",
      options: ["account", "credits", "payment"],
      required: ["account", "credits"],
      run: async ({ values }, context) => {
        const account = values.account;
        if (!isAddress(account)) throw invalid("--account takes the wallet address the credits are for");
        const payment = values.payment === undefined ? newPayment() : paymentOf(values.payment);
        await send(values, context, payment, ({ amountMinor, currency }) => checkoutCompleted({ payment, account, amountMinor, currency }));
      },
    },
    refund: {
      summary: "the payment's refunded total is now <n> credits",
      options: ["payment", "credits"],
      required: ["payment", "credits"],
      run: async ({ values }, context) => {
        const payment = paymentOf(values.payment!);
        await send(values, context, payment, ({ amountMinor, currency }) =>
          chargeRefunded({ payment, amountMinor, refundedMinor: amountMinor, currency }),
        );
      },
    },
    dispute: {
      summary: "a dispute opened, or closed",
      options: ["payment", "credits", "id", "close"],
      required: ["payment", "credits", "id"],
      run: async ({ values }, context) => {
        const payment = paymentOf(values.payment!);
        const closed = values.close as "won" | "lost" | undefined;
        await send(values, context, payment, ({ amountMinor, currency }) =>
          dispute({ payment, disputeId: values.id!, amountMinor, currency, closed }),
        );
      },
    },
  },
};

/** The local Stripe stand-in: parses `args`, sends one event, returns the exit code. */
export async function runStripeCli(args: readonly string[], context: StripeCliContext): Promise<number> {
  return runCli(STRIPE_CLI, args, context);
}

/** Reads the service's terms, posts the event `build` makes in them, and prints the service's answer. */
async function send(
  values: Values,
  context: StripeCliContext,
  payment: SimulatedPayment,
  build: (terms: { amountMinor: number; currency: string }) => { type: string; id: string },
): Promise<void> {
  const credits = Number(values.credits);
  if (!Number.isSafeInteger(credits) || credits < 0) throw invalid("--credits takes a whole number of credits");
  const stack = await readStackFile(stackFilePath(context.projectRoot)).catch(() => undefined);
  if (stack?.credits === undefined)
    throw new AvnError("NO_STACK", "no local stack with a credits service is running: start one with `npm start`");
  const { url, webhookUrl, webhookSecret } = stack.credits;
  let terms: { currency: string; creditsPerMinorUnit: number };
  try {
    terms = (await (await fetch(`${url}/credits/catalogue`)).json()) as typeof terms;
  } catch (error) {
    throw new AvnError("SERVICE_DOWN", `the credits service at ${url} does not answer: is the local stack still running?`, {
      cause: error,
    });
  }
  const { currency, creditsPerMinorUnit } = terms;
  if (credits % creditsPerMinorUnit !== 0) throw invalid(`--credits must be a whole multiple of ${creditsPerMinorUnit} (credits per cent)`);
  const body = build({ amountMinor: credits / creditsPerMinorUnit, currency });
  const answer = await postWebhook(webhookUrl, body, webhookSecret);
  if (answer.status !== 200)
    throw new CreditsError(answer.status, `the credits service answered ${answer.status}: ${String(answer.body.message)}`);
  context.print(
    `${body.type} ${body.id} (payment ${payment.paymentIntent}): ${String(answer.body.outcome)}${answer.body.duplicate === true ? " (a replay)" : ""}`,
  );
}

function paymentOf(paymentIntent: string): SimulatedPayment {
  return { paymentIntent, checkoutSession: "" };
}

function invalid(message: string): AvnError {
  return new AvnError("INVALID_INPUT", message);
}
