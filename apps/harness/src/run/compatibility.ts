import type { BackendFactory } from '../backends/types.js';
import { OptionsError, type ParsedRunOptions } from './options.js';
import { scenarioSettings } from './scenario-settings.js';

/** Refuses combinations that cannot mean anything, saying why, before anything is started. */
export function validateRun(options: ParsedRunOptions, factory: BackendFactory): void {
  const problems: string[] = [];
  if (options.fencing && !factory.safeFences && options.workload !== 'cas' && options.workload !== 'cron') {
    problems.push(`${factory.name} gives no safe fence, so fencing cannot apply: add --no-fencing`);
  }
  if (options.workload === 'election' && !factory.safeFences && !factory.nativeElection) {
    problems.push(`the election workload needs terms; ${factory.name} has neither fences nor an election`);
  }
  for (const fault of options.fault) {
    if (!factory.faults.includes(fault)) {
      problems.push(
        `fault ${fault} does not apply to ${factory.name}; it supports: ${factory.faults.join(', ')}`,
      );
    }
  }
  const required = scenarioSettings(options.scenario).backend;
  if (required && factory.name !== required.name) {
    problems.push(`the ${options.scenario} scenario is ${required.why}: use --backend ${required.name}`);
  }
  if (options.scenario && options.fault.length > 0) {
    problems.push('a scripted --scenario runs alone: drop --fault');
  }
  if (problems.length > 0) throw new OptionsError(`cannot run this combination:\n  ${problems.join('\n  ')}`);
}
