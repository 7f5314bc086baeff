import { pino, type Logger } from "pino";

/** One pino line as the node writes it. */
export interface LogLine {
  level: number;
  msg: string;
  component?: string;
  [field: string]: unknown;
}

/** A pino logger whose lines land, parsed, in `lines` (pino writes to a plain stream synchronously). */
export function captureLogs(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  return { logger, lines };
}
