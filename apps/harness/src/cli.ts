#!/usr/bin/env node
/**
 * `fencekit`: run lock workloads against real servers under faults, check the histories, publish the
 * report. Progress goes to stderr; the report's location and verdicts to stdout.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { escapeText } from '@fencekit/checker';
import { Command, CommanderError, Option } from 'commander';
import { BACKENDS } from './backends/types.js';
import { recheckRun } from './check/recheck.js';
import { ignoreInheritedMutant, mutantsCommand, runWithMutant } from './mutation/command.js';
import { FAULT_NAMES } from './nemesis/faults.js';
import { SCENARIO_NAMES } from './nemesis/scenarios.js';
import { prepareOutputDir } from './report/output-dir.js';
import { rebuildSite } from './report/rebuild.js';
import { NothingToReportError, readStoredRuns, writeSiteIndex } from './report/site.js';
import { warnOnce, warnOnStderr } from './report/warnings.js';
import { leftOpen, openResources } from './run/leftovers.js';
import { OptionsError, parseRunOptions } from './run/options.js';
import { consoleProgress } from './run/progress.js';
import { runOnce } from './run/run.js';
import { describeEvidence } from './suite/evidence.js';
import { suiteExitCode } from './suite/exit.js';
import {
  parseFirstSeed,
  parseProvider,
  parseSeeds,
  selectEntries,
  sshMatrix,
  suiteMatrix,
} from './suite/matrix.js';
import { type SuiteResults, suiteResults } from './suite/results.js';
import type { SuiteOutcome } from './suite/suite.js';
import { runSuite } from './suite/suite.js';
import { WORKLOADS } from './workloads/types.js';

/** `run` and `check` exit by verdict; 3 is a failure (servers, files), 64 a usage error (never 1: illegal). */
const EXIT: Record<string, number> = { ok: 0, illegal: 1, unknown: 2 };
const EXIT_FAILED = 3;
const EXIT_USAGE = 64;
/** package.json sits one level above both src/ and dist/. */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
/** What was open before any command ran (stdio and the like): only what a command adds counts as left. */
void process.stdout;
void process.stderr;
// A reader of our output that went away (`| head`) must not crash the run with exit 1, which means illegal, and
// leave its processes behind (#20): the run goes on, heals and tears down, and exits by its verdict.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}
const baseline = openResources();
ignoreInheritedMutant();
const progress = consoleProgress();

/** Ctrl-C once: heal faults, stop clients, tear servers down, keep the partial history. Twice: exit now. */
function interruptible(): AbortSignal {
  const controller = new AbortController();
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write(
      '\nfencekit: interrupted: healing faults and tearing down (Ctrl-C again to quit now)\n',
    );
    controller.abort(new Error('interrupted'));
  });
  process.on('SIGTERM', () => controller.abort(new Error('terminated')));
  return controller.signal;
}

const program = new Command('fencekit')
  .description('Jepsen-style harness: lock clients against real clusters under faults, checked and reported')
  .version(VERSION, '-V, --version', 'print the version')
  // Commander's own refusals (unknown option or command, missing argument) exit 64 like ours, not 1;
  // set before the commands are added, which inherit it.
  .exitOverride()
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nExit codes: run and check 0 ok, 1 illegal, 2 unknown; suite 0 all as predicted, 1 a verdict not as predicted;\n3 a failure (a run that errored, servers, files); 64 a usage error. Durations: 500ms, 30s, 2m, 1h (a bare number is seconds).',
  )
  // A reports directory that cannot take files fails at once (exit 3), before servers or clients start.
  .hook('preAction', (_program, command) => {
    const out = command.opts().out;
    // `report` rebuilds what is there: it creates no directory (a mistyped path is an error, not an empty site).
    if (typeof out === 'string') prepareOutputDir(out, { create: command.name() !== 'report' });
  });

program
  .command('run')
  .description('one run: workload × backend × faults → history → checkers → report')
  .addOption(new Option('--backend <name>', `lock backend: ${BACKENDS.join(', ')}`).default('memory'))
  .addOption(new Option('--workload <name>', `workload: ${WORKLOADS.join(', ')}`).default('inventory'))
  .option('--fault <list>', `comma-separated faults: none, ${FAULT_NAMES.join(', ')}`, 'none')
  .option('--scenario <name>', `scripted scenario instead of --fault: ${SCENARIO_NAMES.join(', ')}`)
  .option('--clients <n>', 'client processes', '5')
  .option('--time <duration>', 'run length (e.g. 60s, 2m)', '10s')
  .option('--seed <n>', 'seed of the fault schedule and client jitter', '1')
  .option('--no-fencing', 'the resource accepts writes whatever their fence')
  .option(
    '--provider <name>',
    'where servers run: auto, local, docker; ssh = machines you name (--nodes); external = servers you run (--endpoints), client-side faults only',
    'auto',
  )
  .option('--endpoints <list>', '--provider external: the servers’ client endpoints, host:port,host:port')
  .option(
    '--nodes <list>',
    '--provider ssh: the machines, host[:port],… (it installs, starts, faults and WIPES servers there: never production)',
  )
  .option('--ssh-user <name>', '--provider ssh: login user (not root: commands run with sudo -n)')
  .option('--ssh-key <path>', '--provider ssh: private key file (its path only is used; never printed)')
  .option('--ssh-port <n>', '--provider ssh: ssh port of nodes named without one (default 22)')
  .option('--ssh-host-keys <mode>', '--provider ssh: strict (default: host keys already known) or accept-new')
  .option(
    '--ssh-known-hosts <file>',
    '--provider ssh: known_hosts file to check (and, with accept-new, record) keys in',
  )
  .option('--ttl <duration>', 'lock TTL (default: per backend)')
  .option('--session <duration>', 'zk session timeout apart from the TTL (default: max(4s, TTL))')
  .option(
    '--abort-rate <share>',
    'share (0..1) of acquires given up while in flight: aborted after 0–8 ms or a waitMs of 1–4 ms',
    '0',
  )
  .option('--window <duration>', 'gap between a client’s lease check and its write', '30ms')
  .option('--stock <n>', 'starting stock of the inventory', '100000')
  .option('--tick <duration>', 'cron tick', '100ms')
  .option('--out <dir>', 'reports directory', 'reports')
  .option('--mutant <name>', 'mutation mode: the clients run this broken adapter variant (@fencekit/mutants)')
  .option(
    '--json',
    'print the result as JSON on stdout (verdict, run id, directory, page, results.json, the fields of run.json)',
  )
  .action(async (o: Record<string, string | boolean | undefined>) => {
    const options = parseRunOptions({
      backend: o.backend as never,
      workload: o.workload as never,
      fault: o.fault as string,
      ...(o.scenario ? { scenario: o.scenario as never } : {}),
      clients: o.clients as string as never,
      time: o.time as string,
      seed: o.seed as string as never,
      fencing: o.fencing as boolean,
      provider: o.provider as never,
      ...(o.endpoints ? { endpoints: o.endpoints as string } : {}),
      ...sshFlags(o),
      ...(o.ttl ? { ttl: o.ttl as string } : {}),
      ...(o.session ? { session: o.session as string } : {}),
      abortRate: o.abortRate as string as never,
      window: o.window as string,
      stock: o.stock as string as never,
      tick: o.tick as string,
      out: o.out as string,
    });
    const signal = interruptible();
    const run = o.mutant
      ? await runWithMutant(o.mutant as string, options.backend, () =>
          runOnce(options, { signal, sink: progress }),
        )
      : await runOnce(options, { signal, sink: progress });
    process.stdout.write(
      o.json
        ? `${JSON.stringify(
            {
              verdict: run.verdict,
              id: run.id,
              dir: resolve(run.dir),
              page: resolve(run.dir, 'index.html'),
              results: resolve(run.dir, 'results.json'),
              meta: run.meta,
            },
            null,
            2,
          )}\n`
        : `${run.verdict}\t${resolve(run.dir, 'index.html')}\n`,
    );
    process.exitCode = EXIT[run.verdict];
  });

program
  .command('suite')
  .description('the backend × fault × fencing matrix; prints where the report is')
  .option('--short', 'a few seconds per run: the whole matrix in minutes')
  .option('--seeds <n>', 'seeds per cell (1..1000; default 1 with --short, else 3)')
  .option('--seed <n>', 'first seed of every cell (then n+1, …)', String(7))
  .option('--backends <list>', `only these backends (${BACKENDS.join(', ')})`)
  .option('--faults <list>', 'only the cells whose faults include one of these')
  .option('--provider <name>', 'auto, local, docker; ssh: one cell per consensus backend on --nodes', 'auto')
  .option(
    '--nodes <list>',
    '--provider ssh: the machines, host[:port],… (servers there are installed and WIPED)',
  )
  .option('--ssh-user <name>', '--provider ssh: login user')
  .option('--ssh-key <path>', '--provider ssh: private key file (never printed)')
  .option('--ssh-port <n>', '--provider ssh: ssh port of nodes named without one')
  .option('--ssh-host-keys <mode>', '--provider ssh: strict (default) or accept-new')
  .option('--ssh-known-hosts <file>', '--provider ssh: known_hosts file')
  .option('--out <dir>', 'reports directory', 'reports')
  .option('--json', 'print the runs and the per-cell figures as JSON on stdout (instead of the tables)')
  .action(
    async (o: {
      short?: boolean;
      seeds?: string;
      seed?: string;
      backends?: string;
      faults?: string;
      provider: string;
      out: string;
      json?: boolean;
    }) => {
      const provider = parseProvider(o.provider, { ssh: true });
      const ssh = sshFlags(o);
      // The ssh flags are checked once, as a run's would be, so a bad one is a usage error before any run.
      if (provider === 'ssh' || Object.keys(ssh).length > 0)
        parseRunOptions({ backend: 'etcd', workload: 'inventory', provider: provider as never, ...ssh });
      const matrix =
        provider === 'ssh'
          ? sshMatrix(Boolean(o.short), parseSeeds(o.seeds), parseFirstSeed(o.seed))
          : suiteMatrix(Boolean(o.short), parseSeeds(o.seeds), parseFirstSeed(o.seed));
      const entries = selectEntries(matrix, o);
      const started = performance.now();
      const outcomes = await runSuite(entries, {
        out: o.out,
        provider,
        ...(provider === 'ssh' ? { ssh } : {}),
        signal: interruptible(),
        sink: progress,
      });
      process.exitCode = suiteExitCode(outcomes);
      if (o.json) {
        process.stdout.write(
          `${JSON.stringify(suiteJson(outcomes, suiteResults(outcomes), o.out), null, 2)}\n`,
        );
        return;
      }
      const minutes = ((performance.now() - started) / 60_000).toFixed(1);
      for (const x of outcomes) {
        const verdict = x.run?.verdict ?? 'not run';
        const mark = x.agrees
          ? 'as predicted'
          : x.entry.expect === 'report'
            ? ''
            : `PREDICTED ${x.entry.expect}`;
        process.stdout.write(
          `${verdict.padEnd(8)} ${x.entry.options.backend.padEnd(8)} ${String(x.entry.options.workload).padEnd(10)} ${x.entry.why}${mark ? ` (${mark})` : ''}${x.error ? `: ${x.error}` : ''}\n`,
        );
      }
      process.stdout.write(
        '\nPer cell (backend · faults · fencing): convicted/judged, 95 % Wilson interval, median time to first violation\n',
      );
      for (const cell of suiteResults(outcomes).cells) {
        const time =
          cell.medianFirstViolationMs === null
            ? ''
            : `, first violation after ${(cell.medianFirstViolationMs / 1_000).toFixed(1)} s (median of ${cell.timedConvictions})`;
        process.stdout.write(
          `${cell.backend} · ${cell.faults} · fencing ${cell.fencing ? 'on' : 'off'}: ${describeEvidence(cell)}${time}${cell.notRun ? `; ${cell.notRun} not run` : ''}\n`,
        );
      }
      process.stdout.write(
        `\n${outcomes.length} runs in ${minutes} min. Report: ${resolve(o.out, 'index.html')}, figures: ${resolve(o.out, 'results.json')}\n`,
      );
    },
  );

program
  .command('mutants')
  .description(
    'mutation score: each broken adapter variant under its exposing faults until convicted; prints the table',
  )
  .option('--seeds <n>', 'seeds per mutant (1..N, until the first conviction)', '5')
  .option('--budget <duration>', 'harness time per mutant before it counts as not convicted', '60s')
  .option('--time <duration>', 'run length per seed, unless the mutant sets its own', '10s')
  .option('--only <list>', 'only these mutants (comma-separated names)')
  .option('--backends <list>', 'only the mutants of these backends')
  .option('--provider <name>', 'where servers run: auto, local, docker', 'auto')
  .option('--out <dir>', 'reports directory', 'reports')
  .action(async (o: Parameters<typeof mutantsCommand>[0]) => {
    await mutantsCommand(o, {
      signal: interruptible(),
      sink: progress,
      write: (text) => process.stdout.write(text),
    });
  });

program
  .command('check <run-dir>')
  .description('re-check a stored history and rewrite its results.json and page')
  .action(async (dir: string) => {
    const verdict = await recheckRun(dir);
    process.stdout.write(`${verdict}\t${resolve(dir, 'results.json')}\n`);
    process.exitCode = EXIT[verdict];
  });

program
  .command('report')
  .description('rebuild every run page and the site index from stored results')
  .option('--out <dir>', 'reports directory', 'reports')
  .action((o: { out: string }) => {
    const warn = warnOnce(warnOnStderr);
    // Nothing to report is not a success: no page is written, and the exit says so.
    const stored = readStoredRuns(o.out);
    if (stored.runs.length === 0) {
      for (const w of stored.skipped) warn(w);
      throw new NothingToReportError(o.out);
    }
    const pages = rebuildSite(o.out, warn);
    const index = writeSiteIndex(o.out, { warn });
    process.stdout.write(`${pages} run pages; ${resolve(index)}\n`);
  });

/** The `--nodes` and `--ssh-*` flags given, as run options (validated there, with the rest). */
function sshFlags(o: Record<string, unknown>) {
  const text = (key: string) => (typeof o[key] === 'string' ? (o[key] as string) : undefined);
  const pairs = {
    nodes: text('nodes'),
    sshUser: text('sshUser'),
    sshKey: text('sshKey'),
    sshPort: text('sshPort'),
    sshHostKeys: text('sshHostKeys'),
    sshKnownHosts: text('sshKnownHosts'),
  };
  return Object.fromEntries(Object.entries(pairs).filter(([, v]) => v !== undefined)) as Partial<
    Record<keyof typeof pairs, never>
  >;
}

/** `suite --json`: each run as predicted or not, and the per-cell figures results.json holds. */
function suiteJson(outcomes: readonly SuiteOutcome[], results: SuiteResults, out: string) {
  return {
    kind: 'fencekit-suite-runs',
    agrees: outcomes.every((x) => x.agrees),
    report: resolve(out, 'index.html'),
    results: resolve(out, 'results.json'),
    runs: outcomes.map((x) => ({
      backend: x.entry.options.backend,
      workload: x.entry.options.workload,
      fault: x.entry.options.fault ?? 'none',
      scenario: x.entry.options.scenario ?? null,
      fencing: x.entry.options.fencing ?? true,
      seed: x.entry.options.seed ?? null,
      why: x.entry.why,
      predicted: x.entry.expect,
      verdict: x.run?.verdict ?? null,
      agrees: x.agrees,
      id: x.run?.id ?? null,
      page: x.run ? resolve(x.run.dir, 'index.html') : null,
      error: x.error ?? null,
    })),
    cells: results.cells,
  };
}

program
  .parseAsync()
  .catch((error: unknown) => {
    if (error instanceof CommanderError) {
      // Commander has printed its message (or the help, or the version) already.
      process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    // Messages may name paths from a directory listing (a run directory's name): no raw escapes.
    process.stderr.write(`fencekit: ${escapeText(message)}\n`);
    process.exitCode = error instanceof OptionsError ? EXIT_USAGE : EXIT_FAILED;
  })
  // Every server and process was torn down by now. Anything still open was left by a library: name it
  // (a silent exit would hide the bug), then exit explicitly. Ending by running out of work is not an
  // option while such a handle exists: a proxied socket whose reset failed (see the issue #7 note) is
  // never closed, and Node's exit-time handle cleanup then spins on it forever at full CPU.
  .finally(async () => {
    // A child that just exited closes its handles on the next turns of the loop: let them. The timer
    // stays referenced, so the loop cannot end (and reach that cleanup) before the exit below.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const left = leftOpen(baseline);
    if (left.length > 0)
      process.stderr.write(`fencekit: warning: left open after the command: ${left.join(', ')}\n`);
    process.exit();
  });
