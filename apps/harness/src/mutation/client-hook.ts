import type { ClientBackend } from '../backends/types.js';
import { loadMutants, MUTANT_ENV } from './mutants-module.js';

/** A client process's mutant hook, from its environment (see `MUTANT_ENV`). */
export interface ClientMutation {
  readonly name: string;
  /** The backend as the workload should see it (the lock client wrapped, where the mutant asks). */
  wrap(backend: ClientBackend): ClientBackend;
}

/**
 * In a client process asked for a mutant: installs it (its patches land on the adapter's classes in
 * this process) before the backend connects. Undefined when no mutant was asked for; throws when the
 * mutant is unknown, for another backend, or its target is missing in the adapter.
 */
export async function installRequestedMutant(backend: string): Promise<ClientMutation | undefined> {
  const name = process.env[MUTANT_ENV];
  if (name === undefined || name === '') return undefined;
  const mutant = (await loadMutants()).findMutant(name);
  if (mutant.backend !== backend) {
    throw new Error(`mutant ${name} breaks the ${mutant.backend} adapter, not ${backend}`);
  }
  const hooks = await mutant.install();
  return {
    name,
    wrap: (connected) =>
      hooks.wrapLocks === undefined ? connected : { ...connected, locks: hooks.wrapLocks(connected.locks) },
  };
}
