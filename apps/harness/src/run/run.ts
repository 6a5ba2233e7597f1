import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runClientsUnderFaults } from './fault-phase.js';
import type { ParsedRunOptions } from './options.js';
import { type RunMeta, writeRun } from './output.js';
import { startProcesses } from './processes.js';
import { enter, newRun, type Run, type RunHooks, say } from './record.js';
import { sshDeploy } from './ssh-options.js';
import { stopProcesses } from './teardown.js';

export type { RunHooks } from './record.js';

export interface RunSummary {
  id: string;
  dir: string;
  verdict: 'ok' | 'illegal' | 'unknown';
  meta: RunMeta;
}

/**
 * One run, as Jepsen's: deploy the servers (or reuse a shared deployment), set up the resource and the
 * client processes, run the clients under the nemesis, recover, tear down, then check the history and
 * report under `<out>/<run-id>/`. Each phase is a function over the one `Run` record; whatever
 * happens, every process is killed, every fault healed and the servers closed (unless shared).
 */
export async function runOnce(options: ParsedRunOptions, hooks: RunHooks = {}): Promise<RunSummary> {
  const run = await newRun(options, hooks);
  const onAbort = () => run.abort.abort(hooks.signal?.reason);
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await deploy(run);
    enter(run, 'setup', 'starting resource and clients');
    const processes = await startProcesses(run);
    const context = await runClientsUnderFaults(run, processes);
    await stopProcesses(run, processes, context);
  } catch (error) {
    run.collector.problem(`run failed: ${(error as Error).message}`);
    throw error;
  } finally {
    hooks.signal?.removeEventListener('abort', onAbort);
    await cleanUp(run);
  }
  return checkAndReport(run);
}

/** Deploy: the backend's servers, unless the caller shares a deployment. */
async function deploy(run: Run): Promise<void> {
  if (run.deployment) return;
  await run.factory.preflight(run.provider);
  enter(run, 'deploy', `backend=${run.options.backend} provider=${run.provider}`);
  run.deployment = await run.factory.deploy({
    provider: run.provider,
    signal: run.abort.signal,
    ...(run.options.endpoints ? { endpoints: run.options.endpoints } : {}),
    // ssh: each node's server log and configuration land in the run's directory, beside its report.
    ...(run.provider === 'ssh' ? { ssh: sshDeploy(run.options, join(run.dir, 'nodes')) } : {}),
  });
}

/** Whatever happened: no process left, no fault left, servers closed unless shared, temp files gone. */
async function cleanUp(run: Run): Promise<void> {
  for (const child of run.children) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  const { deployment } = run;
  // A heal or clean-up that failed is said and noted as a problem of the run: the servers may have stayed
  // partitioned or paused past the history's end, so a verdict by liveness would not be trustworthy.
  const failed = (what: string) => (error: unknown) => {
    const line = `${what} failed: ${(error as Error).message}`;
    say(run, line);
    run.collector.problem(line);
  };
  if (deployment) await deployment.faults.heal().catch(failed('the final heal'));
  if (deployment && !run.hooks.deployment) await deployment.close().catch(failed('the clean-up'));
  rmSync(run.work, { recursive: true, force: true });
}

/** Check and report: the history, run.json, results.json and the pages. */
async function checkAndReport(run: Run): Promise<RunSummary> {
  const { options, id, dir } = run;
  const meta: RunMeta = {
    id,
    startedAt: run.startedIso,
    backend: options.backend,
    workload: options.workload,
    faults: options.fault,
    scenario: options.scenario ?? null,
    fencing: run.fencing,
    safeFences: run.factory.safeFences,
    provider: run.provider,
    ...(run.provider === 'external' ? { clientSideOnly: true } : {}),
    clients: options.clients,
    seed: options.seed,
    durationMs: options.time,
    ...(run.startedAtNs === undefined ? {} : { startedAtNs: run.startedAtNs }),
    elapsedMs: Math.round(run.elapsedMs),
    ttlMs: run.ttlMs,
    windowMs: options.window,
    stock: options.stock,
    tickMs: options.tick,
    nodes: run.deployment?.nodes ?? [],
    faultsApplied: run.faultsApplied,
    problems: run.collector.completeness(),
  };
  const verdict = await writeRun(dir, meta, run.collector.history());
  say(run, `verdict=${verdict} report=${join(dir, 'index.html')}`);
  return { id, dir, verdict, meta };
}
