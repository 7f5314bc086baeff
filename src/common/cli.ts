// The one command-line skeleton of the repository's CLIs (`npm run bridge`, `npm run gov`,
// `npm run credits:stripe`): each declares its options and commands once, and this module parses the
// arguments against them (node:util parseArgs), writes `--help` and `help <command>` from them, refuses what
// they do not declare, and turns what a command throws into one line on stderr and the exit code.
import { parseArgs } from "node:util";

import { AvnError } from "@avn/protocol/errors";

import { describeError } from "./describe-error.ts";

/**
 * The exit codes of every CLI, decided here and nowhere else. A refusal is anything the CLI expected and
 * can explain, an `AvnError` (what was typed: an unknown command or option, a missing or malformed value;
 * the configuration; the chain's or the service's state), printed `error [CODE]: message`. Anything else is
 * unexpected (an RPC down, a bug) and printed as its one-line reason with every URL and secret replaced.
 * The bridge's and governance's tests and docs already held 1 for a refused command line and 2 for the
 * unexpected, so a usage error is a refusal like the others.
 */
export const EXIT_CODES = { success: 0, refused: 1, unexpected: 2 } as const;

/** One option, declared once: parsing, validation and help all read it. */
export interface CliOption {
  type: "string" | "boolean";
  /** What it is, for help; a required option's missing message reads `--name takes <description>`. */
  description: string;
  /** How help shows a string option's value (`<address>`); `choices` shows itself (`devnet|testnet`). */
  value?: string;
  /** The only values a string option takes; any other is refused before the command runs. */
  choices?: readonly string[];
  default?: string | boolean;
  /** Taken by every command, and listed once under them. */
  global?: boolean;
}

type OptionValue<Option extends CliOption> =
  (Option["type"] extends "boolean" ? boolean : string) | (Option extends { default: string | boolean } ? never : undefined);

/** What a command receives of its options: defaults applied, typed by the declarations. */
export type CliValues<Options extends Record<string, CliOption>> = { -readonly [Name in keyof Options]: OptionValue<Options[Name]> };

export interface CommandInput<Options extends Record<string, CliOption>> {
  command: string;
  values: CliValues<Options>;
  /** The positional arguments after the command's name. */
  args: string[];
}

export interface CliCommand<Options extends Record<string, CliOption>, Context> {
  /** One line for the command list. */
  summary: string;
  /** Its positional arguments as help shows them (`<id> for|against|abstain`); without it, it takes none. */
  arguments?: string;
  /** The options it takes besides the global ones, in the order help lists them. */
  options?: readonly (keyof Options & string)[];
  /** Those of its options it cannot do without: refused before `run` when missing. */
  required?: readonly (keyof Options & string)[];
  /** More for `help <command>`: the forms of its arguments, what it prints. */
  details?: string;
  run: (input: CommandInput<Options>, context: Context) => Promise<void>;
}

/** What a CLI has of its process: where it prints, and the environment (DEBUG, and the CLI's own settings). */
export interface CliContext {
  print: (text: string) => void;
  printError: (text: string) => void;
  env?: NodeJS.ProcessEnv;
}

export interface Cli<Options extends Record<string, CliOption>, Context extends CliContext> {
  /** How it is started, as help shows it: `npm run bridge --`. */
  invocation: string;
  /** A paragraph under the usage line. */
  about?: string;
  options: Options;
  commands: Readonly<Record<string, CliCommand<Options, Context>>>;
  /** The code of a usage error in the CLI's own vocabulary (the bridge's `INVALID_ARGUMENT`). */
  usageCode: string;
  /** Printed last in every help text (the keys it reads, say). */
  footer?: string;
  /** `false` prints refusals as `error: message`, without the code. */
  printCodes?: boolean;
}

/** The option every CLI takes without declaring it. */
const HELP: CliOption = { type: "boolean", description: "this help; `help <command>` for one command's", global: true };
/** Where option descriptions start in help. */
const MAX_COLUMN = 34;

/** A command line that does not match the declarations: refused with the help that shows what would. */
class UsageError extends AvnError {
  readonly usage: string | undefined;

  constructor(code: string, message: string, usage?: string) {
    super(code, message);
    this.name = "UsageError";
    this.usage = usage;
  }
}

/**
 * Runs `args` against `cli`: prints help, or runs one command, and returns the exit code (EXIT_CODES). It
 * never throws, and never prints a stack trace unless DEBUG is set in `context.env` and the error was
 * unexpected.
 */
export async function runCli<Options extends Record<string, CliOption>, Context extends CliContext>(
  cli: Cli<Options, Context>,
  args: readonly string[],
  context: Context,
): Promise<number> {
  try {
    const parsed = parse(cli, args);
    if ("help" in parsed) {
      context.print(parsed.help);
      return EXIT_CODES.success;
    }
    await parsed.command.run(parsed.input, context);
    return EXIT_CODES.success;
  } catch (error) {
    return report(cli, error, context);
  }
}

/** The whole help of `cli`, or one command's. */
function helpText<Options extends Record<string, CliOption>, Context extends CliContext>(
  cli: Cli<Options, Context>,
  commandName?: string,
): string {
  const globals = Object.entries(cli.options).filter(([, option]) => option.global === true);
  globals.push(["help", HELP]);
  const sections: string[] = [];
  if (commandName === undefined) {
    sections.push(`Usage: ${cli.invocation} <command> [options]`);
    if (cli.about !== undefined) sections.push(cli.about);
    const rows = Object.entries(cli.commands).map(([name, command]): [string, string] => [
      [name, synopsis(cli, command)].filter((part) => part !== "").join(" "),
      command.summary,
    ]);
    sections.push(`Commands:\n${table(rows)}`);
    sections.push(`Options of every command:\n${optionTable(globals)}`);
    sections.push(`\`${cli.invocation} help <command>\` shows a command's options.`);
  } else {
    const command = cli.commands[commandName];
    sections.push(`Usage: ${[cli.invocation, commandName, synopsis(cli, command), "[options]"].filter((part) => part !== "").join(" ")}`);
    sections.push(command.summary);
    if (command.details !== undefined) sections.push(command.details);
    const own = (command.options ?? []).map((name): [string, CliOption] => [name, cli.options[name]]);
    if (own.length > 0) sections.push(`Options:\n${optionTable(own)}`);
    sections.push(`Options of every command:\n${optionTable(globals)}`);
  }
  if (cli.footer !== undefined) sections.push(cli.footer);
  return sections.join("\n\n");
}

type Parsed<Options extends Record<string, CliOption>, Context> =
  { help: string } | { command: CliCommand<Options, Context>; input: CommandInput<Options> };

function parse<Options extends Record<string, CliOption>, Context extends CliContext>(
  cli: Cli<Options, Context>,
  args: readonly string[],
): Parsed<Options, Context> {
  const declared: Record<string, CliOption> = { ...cli.options, help: HELP };
  const config = Object.fromEntries(
    Object.entries(declared).map(([name, option]) => [
      name,
      name === "help" ? { type: "boolean" as const, short: "h" } : { type: option.type },
    ]),
  );
  // Not strict: the checks below name the option and show the right help, where parseArgs would throw a
  // message of its own; and a negative number is read as the value it is (`--amount -1`).
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options: config,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const usage = (message: string, commandName?: string) => new UsageError(cli.usageCode, message, helpText(cli, commandName));
  const options = tokens.flatMap((token) => (token.kind === "option" ? [token] : []));
  const unknown = options.find((token) => !Object.hasOwn(declared, token.name));
  if (unknown !== undefined) throw usage(`Unknown option ${unknown.rawName}`);

  const [name, ...rest] = positionals;
  if (name === "help") {
    if (rest[0] === undefined) return { help: helpText(cli) };
    if (!Object.hasOwn(cli.commands, rest[0])) throw usage(`Unknown command ${JSON.stringify(rest[0])}`);
    return { help: helpText(cli, rest[0]) };
  }
  if (name === undefined) return { help: helpText(cli) };
  if (!Object.hasOwn(cli.commands, name)) throw usage(`Unknown command ${JSON.stringify(name)}`);
  const command = cli.commands[name];
  if (values.help === true) return { help: helpText(cli, name) };

  for (const token of options) {
    const option = declared[token.name];
    if (option.global !== true && !(command.options ?? []).includes(token.name))
      throw usage(`${name} takes no ${token.rawName} option`, name);
    if (option.type === "boolean" && token.value !== undefined) throw usage(`${token.rawName} takes no value`, name);
    if (option.type === "string") {
      if (token.value === undefined) throw usage(`${token.rawName} needs a value: ${option.description}`, name);
      // What looks like the next option is most likely one: a forgotten value. `--note=-x` says it is not.
      if (token.inlineValue === false && /^--?[a-z]/i.test(token.value))
        throw usage(
          `${token.rawName} needs a value, not the option ${token.value} (write ${token.rawName}=${token.value} if it is the value)`,
          name,
        );
      if (option.choices !== undefined && !option.choices.includes(token.value))
        throw new UsageError(cli.usageCode, `${token.rawName} must be ${orList(option.choices)}, not ${JSON.stringify(token.value)}`);
    }
  }
  if (command.arguments === undefined && rest.length > 0) throw usage(`${name} takes no arguments, not ${JSON.stringify(rest[0])}`, name);
  const missing = (command.required ?? []).find((option) => values[option] === undefined);
  if (missing !== undefined)
    throw new UsageError(cli.usageCode, `--${missing} takes ${cli.options[missing].description}: ${name} needs it`);

  const typed = Object.fromEntries(
    Object.entries(cli.options).map(([option, declaration]) => [option, values[option] ?? declaration.default]),
  ) as CliValues<Options>;
  return { command, input: { command: name, values: typed, args: rest } };
}

function report<Options extends Record<string, CliOption>, Context extends CliContext>(
  cli: Cli<Options, Context>,
  error: unknown,
  context: Context,
): number {
  if (error instanceof AvnError) {
    const head = cli.printCodes === false ? "error" : `error [${error.code}]`;
    const usage = error instanceof UsageError && error.usage !== undefined ? `\n\n${error.usage}` : "";
    context.printError(`${head}: ${error.message}${usage}`);
    return EXIT_CODES.refused;
  }
  // Its short reason, without a URL or a secret (hosted RPC URLs carry API keys). DEBUG adds where it was
  // thrown: the stack's frames only, as its message lines may hold what the describer hid.
  const frames =
    debugging(context.env) && error instanceof Error ? (error.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line)) : [];
  context.printError([`error: ${describeError(error)}`, ...frames].join("\n"));
  return EXIT_CODES.unexpected;
}

function debugging(env: NodeJS.ProcessEnv | undefined): boolean {
  const value = env?.DEBUG;
  return value !== undefined && value !== "" && value !== "0" && value.toLowerCase() !== "false";
}

function synopsis<Options extends Record<string, CliOption>, Context extends CliContext>(
  cli: Cli<Options, Context>,
  command: CliCommand<Options, Context>,
): string {
  const parts = command.arguments === undefined ? [] : [command.arguments];
  for (const name of command.options ?? []) {
    const shown = optionLabel(name, cli.options[name]);
    parts.push((command.required ?? []).includes(name) ? shown : `[${shown}]`);
  }
  return parts.join(" ");
}

function optionLabel(name: string, option: CliOption): string {
  const flag = name === "help" ? "-h, --help" : `--${name}`;
  if (option.type === "boolean") return flag;
  return `${flag} ${option.choices?.join("|") ?? option.value ?? "<value>"}`;
}

function optionTable(options: readonly (readonly [string, CliOption])[]): string {
  return table(
    options.map(([name, option]): [string, string] => {
      const shownDefault = typeof option.default === "string" && option.default !== "" ? ` (default: ${option.default})` : "";
      return [optionLabel(name, option), option.description + shownDefault];
    }),
  );
}

/** Two columns: each label, and its text from one column on (on the next line when the label is longer). */
function table(rows: readonly (readonly [string, string])[]): string {
  const column = Math.min(MAX_COLUMN, Math.max(...rows.map(([label]) => label.length + 4)));
  const indent = " ".repeat(column);
  return rows
    .map(([label, text]) => {
      const left = `  ${label}`;
      const body = text.split("\n").join(`\n${indent}`);
      return left.length + 2 <= column ? `${left.padEnd(column)}${body}` : `${left}\n${indent}${body}`;
    })
    .join("\n");
}

function orList(words: readonly string[]): string {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
}
