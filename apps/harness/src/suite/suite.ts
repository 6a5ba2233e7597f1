import { mkdirSync } from 'node:fs';
import { loadBackend } from '../backends/index.js';
import type { BackendName, Deployment, Provider } from '../backends/types.js';
import { writeSiteIndex } from '../report/site.js';
import { parseRunOptions, type RunOptionsInput } from '../run/options.js';
import { consoleProgress, linesTo, type ProgressSink } from '../run/progress.js';
import { resolveProvider } from '../run/provider.js';
import { type RunSummary, runOnce } from '../run/run.js';
import { agreesWithPrediction } from './agreement.js';
import type { SuiteEntry } from './matrix.js';
import { writeSuiteResults } from './results.js';

export interface SuiteOutcome {
  entry: SuiteEntry;
  run?: RunSummary;
  /** Why the entry did not run (backend unavailable, adapter missing…). */
  error?: string;
  /** The run agrees with the prediction (always true for `report` entries that ran; see agreement.ts). */
  agrees: boolean;
}

export interface SuiteOptions {
  out: string;
  provider: 'auto' | Provider;
  /**
   * `--provider ssh`: the run options naming the machines and the login. Each run then deploys its own servers
   * (a few seconds), so each run's directory gets its nodes' logs and configurations.
   */
  ssh?: Pick<RunOptionsInput, 'nodes' | 'sshUser' | 'sshKey' | 'sshPort' | 'sshHostKeys' | 'sshKnownHosts'>;
  signal?: AbortSignal;
  /** Log lines only (tests); the status of each run comes as a plain line every 2 s. */
  progress?: (line: string) => void;
  /** Lines and live status (the CLI: a bar on a terminal, with the run's place i/N); default: stderr. */
  sink?: ProgressSink;
}

/**
 * Runs the entries grouped by backend, one deployment per backend shared by its runs (each run keeps
 * its own key namespace; every fault is healed between runs). A backend that cannot start fails its
 * entries with the reason and the suite goes on.
 */
export async function runSuite(
  entries: readonly SuiteEntry[],
  options: SuiteOptions,
): Promise<SuiteOutcome[]> {
  const sink = options.sink ?? (options.progress ? linesTo(options.progress) : consoleProgress());
  const progress = (line: string) => sink.line(line);
  let done = 0;
  const provider = await resolveProvider(options.provider);
  const outcomes: SuiteOutcome[] = [];
  const backends = [...new Set(entries.map((x) => x.options.backend))];
  if (provider === 'ssh') {
    for (const [i, entry] of entries.entries()) {
      if (options.signal?.aborted) break;
      const position = { index: i + 1, total: entries.length };
      progress(`suite: run ${i + 1}/${entries.length} (ssh): ${entry.why}`);
      try {
        const run = await runOnce(
          parseRunOptions({ ...entry.options, ...options.ssh, out: options.out, provider }),
          { sink, position, lengthenForFaults: true, ...(options.signal ? { signal: options.signal } : {}) },
        );
        outcomes.push({ entry, run, agrees: agreesWithPrediction(entry, run) });
      } catch (error) {
        outcomes.push({ entry, error: (error as Error).message, agrees: false });
        progress(`suite: run failed: ${(error as Error).message}`);
      }
    }
  }
  for (const backend of provider === 'ssh' ? [] : backends) {
    if (options.signal?.aborted) break;
    const mine = entries.filter((x) => x.options.backend === backend);
    let deployment: Deployment | undefined;
    let factory: Awaited<ReturnType<typeof loadBackend>>;
    try {
      factory = await loadBackend(backend as BackendName);
      await factory.preflight(provider);
      progress(`suite: deploying ${backend} (${provider}) for ${mine.length} runs`);
      deployment = await factory.deploy({ provider, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      const message = (error as Error).message;
      progress(`suite: ${backend} unavailable: ${message}`);
      for (const entry of mine) outcomes.push({ entry, error: message, agrees: false });
      done += mine.length;
      continue;
    }
    try {
      for (const [i, entry] of mine.entries()) {
        if (options.signal?.aborted) break;
        done += 1;
        const position = { index: done, total: entries.length };
        progress(`suite: run ${done}/${entries.length} (${backend} ${i + 1}/${mine.length}): ${entry.why}`);
        let run: RunSummary | undefined;
        try {
          run = await runOnce(parseRunOptions({ ...entry.options, out: options.out, provider }), {
            deployment,
            sink,
            position,
            // A cell whose seed leaves no slot for one of its faults runs long enough for one (#20).
            lengthenForFaults: true,
            ...(options.signal ? { signal: options.signal } : {}),
          });
          outcomes.push({ entry, run, agrees: agreesWithPrediction(entry, run) });
        } catch (error) {
          outcomes.push({ entry, error: (error as Error).message, agrees: false });
          progress(`suite: run failed: ${(error as Error).message}`);
        }
        if (run !== undefined && healFailed(run) && i < mine.length - 1) {
          // The shared deployment did not come back whole (a Redis Cluster whose bus marked every shard
          // failing at load 30): the next runs on it would only measure the breakage. Start it afresh; if
          // that fails, the catch below fails the cell's remaining runs with the reason.
          progress(`suite: ${backend}: the final heal failed, deploying it again for the next runs`);
          await deployment.close().catch(() => undefined);
          deployment = undefined;
          deployment = await factory.deploy({
            provider,
            ...(options.signal ? { signal: options.signal } : {}),
          });
        }
      }
    } catch (error) {
      // A redeploy that failed: the cell's remaining runs cannot run.
      const message = (error as Error).message;
      progress(`suite: ${backend} unavailable: ${message}`);
      const left = mine.slice(outcomes.filter((x) => x.entry.options.backend === backend).length);
      for (const entry of left) outcomes.push({ entry, error: message, agrees: false });
      done += left.length;
    } finally {
      await deployment?.faults.heal().catch(() => undefined);
      await deployment?.close().catch(() => undefined);
    }
  }
  mkdirSync(options.out, { recursive: true });
  writeSiteIndex(options.out);
  writeSuiteResults(options.out, outcomes);
  return outcomes;
}

/** The run's final heal failed: its deployment may not be whole for the next run. */
function healFailed(run: RunSummary): boolean {
  return run.meta.problems.some((problem) => problem.startsWith('the final heal failed'));
}
