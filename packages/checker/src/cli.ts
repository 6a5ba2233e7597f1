#!/usr/bin/env node
import { constants, realpathSync } from 'node:fs';
import { access, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import {
  type CliOptions,
  FORMATS,
  INDEPENDENT_MODES,
  LOCK_CHECKERS,
  parseCheckers,
  parseDuration,
  parseInteger,
  parseSize,
  SEMANTICS,
} from './cli/arguments.js';
import { jsonValue, summary, toJson } from './cli/report.js';
import { BadInputError, check, isBadInput, type Outcome } from './cli/run.js';
import { escapeJson, escapeLine, escapeText } from './cli/terminal.js';
import { renderHtml } from './html/render.js';
import { builtinModels } from './models/registry.js';

/**
 * Exit codes: the verdict; 3 when the input could not be checked at all (unreadable, malformed); 64
 * (BSD's EX_USAGE) for a command line that does not say what to do: never 1, which means illegal.
 */
export const EXIT = { ok: 0, illegal: 1, unknown: 2, badInput: 3, usage: 64 } as const;

/** This package's version (package.json sits one level above both src/ and dist/). */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * `fencekit-check <history> --model <m> | --checker <c,…> [options]` as a function: `argv` without the
 * node and script paths; returns the exit code (0 ok, 1 illegal, 2 unknown, 3 bad input, 64 usage).
 */
export async function main(argv: readonly string[], io: Io = defaultIo): Promise<number> {
  const program = command(io);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit 0; everything else commander refuses is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    throw error;
  }
  const file = program.args[0] as string;
  const options = program.opts<CliOptions>();
  if (options.model === undefined && options.checker === undefined) {
    io.stderr('fencekit-check: say what to check: --model <model> and/or --checker <names>\n');
    io.stderr('(run fencekit-check --help for usage)\n');
    return EXIT.usage;
  }
  try {
    // A report that cannot be written is a bad flag: found before a long check, not after it.
    if (options.html !== undefined) await assertWritable(options.html, file);
    const outcome = await check(file, options);
    const verdict = outcome.composite.verdict;
    // Written before the verdict is printed, so a failure never follows a verdict it contradicts.
    if (options.html !== undefined) await writeReport(options.html, file, options, outcome);
    io.stdout(
      options.json
        ? `${escapeJson(JSON.stringify(toJson(file, options, outcome), jsonValue, 2))}\n`
        : summary(file, outcome),
    );
    return EXIT[verdict];
  } catch (error) {
    if (isBadInput(error)) {
      io.stderr(`fencekit-check: ${escapeLine(error.message)}\n`);
      return EXIT.badInput;
    }
    throw error;
  }
}

async function writeReport(path: string, file: string, options: CliOptions, outcome: Outcome): Promise<void> {
  const html = renderHtml(outcome.composite, outcome.drawn, {
    title: `fencekit-check ${file}`,
    subtitle: [
      options.model && `model ${options.model}`,
      options.checker && `checkers ${options.checker.join(', ')}`,
    ]
      .filter(Boolean)
      .join(' · '),
    timeUnit: outcome.format === 'jsonl' ? 'ns' : 'index',
  });
  await assertWritable(path);
  await writeFile(path, html).catch((error: Error) => {
    throw new BadInputError(`cannot write the HTML report to ${path}: ${error.message}`);
  });
}

/**
 * The report path must be a regular file or not exist yet, in a directory we may write: a FIFO or
 * device would block the write (or swallow it), a directory cannot be written at all.
 */
async function assertWritable(path: string, history?: string): Promise<void> {
  const refuse = (why: string): never => {
    throw new BadInputError(`cannot write the HTML report to ${path}: ${why}`);
  };
  const existing = await stat(path).catch((error: NodeJS.ErrnoException) =>
    error.code === 'ENOENT' ? undefined : refuse(error.message),
  );
  if (existing !== undefined) {
    if (!existing.isFile()) refuse('not a regular file');
    // The report must never overwrite the history it reports on (the same file by any name).
    const input = history === undefined ? undefined : await stat(history).catch(() => undefined);
    if (input !== undefined && input.ino === existing.ino && input.dev === existing.dev)
      refuse('it is the history itself');
    await access(path, constants.W_OK).catch((error: Error) => refuse(error.message));
    return;
  }
  const dir = await stat(dirname(path)).catch((error: Error) => refuse(error.message));
  if (!dir.isDirectory()) refuse(`${dirname(path)} is not a directory`);
  await access(dirname(path), constants.W_OK).catch((error: Error) => refuse(error.message));
}

function command(io: Io): Command {
  return new Command('fencekit-check')
    .description('Check a history: linearizability against a model, and/or lock checks on a harness history.')
    .version(VERSION, '-V, --version', 'print the version')
    .argument('<history>', 'history file (history.jsonl, Jepsen EDN, porcupine log)')
    .addOption(new Option('--model <model>', 'linearizability model').choices(Object.keys(builtinModels)))
    .option(
      '--checker <names>',
      `lock checks, comma-separated: ${LOCK_CHECKERS.join('|')}|all`,
      parseCheckers,
    )
    .addOption(
      new Option('--format <format>', 'history format (default: from the file name)').choices(FORMATS),
    )
    .option(
      '--timeout <duration>',
      'time budget for the linearizability search (e.g. 500ms, 60s, 2m)',
      parseDuration,
      60_000,
    )
    .option(
      '--memory <size>',
      'memory budget of the linearizability search (e.g. 512MiB, 1GiB); over it a partition is unknown',
      parseSize,
    )
    .option('--html <file>', 'write a self-contained HTML report')
    .option('--json', 'print results as JSON, with per-partition (per-key) verdicts')
    .option(
      '--initial-stock <n>',
      'inventory: starting stock when the history has no init event',
      parseInteger,
    )
    .addOption(
      new Option(
        '--semantics <name>',
        'knossos: an ok read of nil is a read of an unknown value, :nil is nil (default for EDN); strict: nil is a value (default otherwise)',
      ).choices(SEMANTICS),
    )
    .addOption(
      new Option(
        '--independent <mode>',
        'jepsen.independent [key value] tuples: auto-detect and split by key, on, or off',
      )
        .choices(INDEPENDENT_MODES)
        .default('auto'),
    )
    .option(
      '--initial-value <edn>',
      'the registers\' value before any write (register, cas-register, fenced-register, multi-register), as EDN: 0, nil, "a", {:x 0}',
    )
    .option(
      '--max-decompressed <size>',
      'most bytes a gzipped history may decompress to (default 1GiB)',
      parseSize,
    )
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout(escapeText(text)),
      writeErr: (text) => io.stderr(escapeText(text)),
    })
    .showHelpAfterError('(run fencekit-check --help for usage)')
    .addHelpText(
      'after',
      '\nExit codes: 0 ok, 1 illegal, 2 unknown (time or memory ran out, a check crashed, or nothing to check), 3 bad input (unreadable or malformed), 64 usage error.',
    );
}

const defaultIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

function invokedDirectly(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (invokedDirectly()) {
  // A reader that stops early (`| head`) closes the pipe: the rest of the output is not wanted, and the
  // exit code must still be the verdict's.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  // Whatever escapes (even from an event handler) is an internal error, exit 2: Node's own exit code
  // for a crash is 1, which reads as "illegal".
  const crash = (error: unknown) => {
    process.stderr.write(
      `fencekit-check: internal error: ${escapeText(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`,
    );
    process.exit(EXIT.unknown);
  };
  process.on('uncaughtException', crash);
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  }, crash);
}
