// Expands `@file` arguments the way GCC's driver (libiberty's expandargv) does,
// so the wrapper sees the real inputs and options inside response files.
import { readFileSync } from 'node:fs';

/** Splits response-file text into arguments: whitespace separates, single and
 *  double quotes group, a backslash escapes the next character. */
export function splitResponseText(text: string): string[] {
  const args: string[] = [];
  let current = '';
  let inArg = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      current += text[++i];
      inArg = true;
    } else if (quote) {
      if (ch === quote) quote = null;
      else current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      inArg = true;
    } else if (/\s/.test(ch)) {
      if (inArg) args.push(current);
      current = '';
      inArg = false;
    } else {
      current += ch;
      inArg = true;
    }
  }
  if (inArg) args.push(current);
  return args;
}

/** Replaces every readable `@file` by its arguments, recursively (as GCC
 *  does, an unreadable `@name` stays a literal argument). */
export function expandResponseFiles(args: readonly string[], depth = 0): string[] {
  if (depth > 32) throw new Error('response files nest more than 32 levels deep');
  const out: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('@') && arg.length > 1) {
      let text: string;
      try {
        text = readFileSync(arg.slice(1), 'utf8');
      } catch {
        out.push(arg);
        continue;
      }
      out.push(...expandResponseFiles(splitResponseText(text), depth + 1));
    } else {
      out.push(arg);
    }
  }
  return out;
}
