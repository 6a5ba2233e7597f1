import { MutantTargetError } from './mutant.js';

/**
 * Reaches an adapter module that its package does not export (`exports` lists only the index): by
 * its file URL next to the package's resolved entry point. ESM caches modules by URL, so this is the
 * very module instance the adapter's own index imported, and a patch on its classes reaches every
 * client. Test code only: the seam a mutant needs where the adapter has no public one.
 */
export async function adapterModule<T>(pkg: string, file: string): Promise<T> {
  const entry = import.meta.resolve(pkg);
  return (await import(new URL(`./${file}`, entry).href)) as T;
}

/**
 * Replaces `proto[method]` with `make(original)`. Returns the original, so tests can restore it.
 * Throws when the method is missing: a mutant whose target vanished must fail loudly, not run as the
 * unmutated adapter and "survive".
 */
export function patchMethod<P extends object, K extends keyof P & string>(
  proto: P,
  method: K,
  make: (original: P[K]) => P[K],
  mutant: string,
): P[K] {
  const original = proto[method];
  if (typeof original !== 'function') throw new MutantTargetError(mutant, `method ${method}`);
  Object.defineProperty(proto, method, { value: make(original), configurable: true, writable: true });
  return original;
}
