import type { Fence, LockClient } from '@fencekit/core';

/**
 * What the harness reads of `@fencekit/mutants`, the private package of deliberately broken adapter
 * variants. The harness does not depend on it (it is never published): it is imported by name, only
 * in mutation mode, and must be present in the checkout (npm workspaces link it) and built.
 */
export interface MutantSpec {
  readonly name: string;
  readonly backend: string;
  readonly breaks: string;
  readonly bug?: string;
  readonly exposure: {
    readonly workload: string;
    readonly faults: readonly string[];
    readonly fencing: boolean;
    readonly timeMs?: number;
    readonly ttlMs?: number;
    readonly sessionMs?: number;
    readonly clients?: number;
    readonly abortRate?: number;
  };
  readonly checkers: readonly string[];
  install(): Promise<{
    wrapLocks?(locks: LockClient<Fence | undefined>): LockClient<Fence | undefined>;
  }>;
}

export interface MutantsModule {
  readonly MUTANTS: readonly MutantSpec[];
  findMutant(name: string): MutantSpec;
}

/** Mutation mode without the mutants package: says what is missing and how to get it. */
export class MutantsUnavailableError extends Error {
  override readonly name = 'MutantsUnavailableError';
}

/** The variable that tells a client process which mutant to install before it connects. */
export const MUTANT_ENV = 'FENCEKIT_MUTANT';

// A variable, so the compiler does not try to resolve a package the harness does not depend on.
const PACKAGE = '@fencekit/mutants';

/**
 * Loads `@fencekit/mutants` (`specifier` only for tests); `MutantsUnavailableError` when it is not
 * installed or not built.
 */
export async function loadMutants(specifier = PACKAGE): Promise<MutantsModule> {
  try {
    return (await import(specifier)) as MutantsModule;
  } catch (error) {
    throw new MutantsUnavailableError(
      `mutation mode needs the private package ${PACKAGE} (packages/mutants of the fencekit checkout, never published): ` +
        `it is missing or not built (${(error as Error).message}); in the checkout run: npx tsc -b packages/mutants`,
    );
  }
}
