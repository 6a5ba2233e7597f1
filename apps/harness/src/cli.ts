#!/usr/bin/env node
/**
 * `fencekit`: run lock workloads against real servers under faults, check the histories, publish the
 * report. Progress goes to stderr; the report's location and verdicts to stdout.
 */
import { resolve } from 'node:path';
import { escapeText } from '@fencekit/checker';
import { Command, Option } from 'commander';
import { BACKENDS } from './backends/types.js';
import { recheckRun } from './check/recheck.js';
import { ignoreInheritedMutant, mutantsCommand, runWithMutant } from './mutation/command.js';
import { FAULT_NAMES } from './nemesis/faults.js';
import { SCENARIO_NAMES } from './nemesis/scenarios.js';
import { prepareOutputDir } from './report/output-dir.js';
import { rebuildSite } from './report/rebuild.js';
import { writeSiteIndex } from './report/site.js';
import { warnOnce, warnOnStderr } from './report/warnings.js';
import { leftOpen, openResources } from './run/leftovers.js';
import { OptionsError, parseRunOptions } from './run/options.js';
import { consoleProgress } from './run/progress.js';
import { runOnce } from './run/run.js';
import { describeEvidence } from './suite/evidence.js';
import { parseSeeds, selectEntries, suiteMatrix } from './suite/matrix.js';
import { suiteResults } from './suite/results.js';
import { runSuite } from './suite/suite.js';
import { WORKLOADS } from './workloads/types.js';

const EXIT: Record<string, number> = { ok: 0, illegal: 1, unknown: 2 };
/** What was open before any command ran (stdio and the like): only what a command adds counts as left. */
void process.stdout;
void process.stderr;
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
  .showHelpAfterError()
  // A reports directory that cannot take files fails at once (exit 3), before servers or clients start.
  .hook('preAction', (_program, command) => {
    const out = command.opts().out;
    if (typeof out === 'string') prepareOutputDir(out);
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
  .option('--provider <name>', 'where servers run: auto, local, docker', 'auto')
  .option('--ttl <duration>', 'lock TTL (default: per backend)')
  .option('--session <duration>', 'zk session timeout apart from the TTL (default: max(4s, TTL))')
  .option('--window <duration>', 'gap between a client’s lease check and its write', '30ms')
  .option('--stock <n>', 'starting stock of the inventory', '100000')
  .option('--tick <duration>', 'cron tick', '100ms')
  .option('--out <dir>', 'reports directory', 'reports')
  .option('--mutant <name>', 'mutation mode: the clients run this broken adapter variant (@fencekit/mutants)')
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
      ...(o.ttl ? { ttl: o.ttl as string } : {}),
      ...(o.session ? { session: o.session as string } : {}),
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
    process.stdout.write(`${run.verdict}\t${resolve(run.dir, 'index.html')}\n`);
    process.exitCode = EXIT[run.verdict];
  });

program
  .command('suite')
  .description('the backend × fault × fencing matrix; prints where the report is')
  .option('--short', 'a few seconds per run: the whole matrix in minutes')
  .option('--seeds <n>', 'seeds per cell')
  .option('--backends <list>', `only these backends (${BACKENDS.join(', ')})`)
  .option('--faults <list>', 'only the cells whose faults include one of these')
  .option('--provider <name>', 'auto, local, docker', 'auto')
  .option('--out <dir>', 'reports directory', 'reports')
  .action(
    async (o: {
      short?: boolean;
      seeds?: string;
      backends?: string;
      faults?: string;
      provider: string;
      out: string;
    }) => {
      const entries = selectEntries(suiteMatrix(Boolean(o.short), parseSeeds(o.seeds)), o);
      const started = performance.now();
      const outcomes = await runSuite(entries, {
        out: o.out,
        provider: o.provider as 'auto',
        signal: interruptible(),
        sink: progress,
      });
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
    const pages = rebuildSite(o.out, warn);
    const index = writeSiteIndex(o.out, { warn });
    process.stdout.write(`${pages} run pages; ${resolve(index)}\n`);
  });

program
  .parseAsync()
  .catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    // Messages may name paths from a directory listing (a run directory's name): no raw escapes.
    process.stderr.write(`fencekit: ${escapeText(message)}\n`);
    process.exitCode = error instanceof OptionsError ? 64 : 3;
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
