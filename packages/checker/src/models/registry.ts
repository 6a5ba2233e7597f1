import { fencedRegister } from './fenced-register.js';
import { kv } from './kv.js';
import type { AnyModel } from './model.js';
import { multiRegister } from './multi-register.js';
import { mutex } from './mutex.js';
import { casRegister, register } from './register.js';
import { set } from './set.js';

/** The built-in models by their CLI names, each with its default options. */
export const builtinModels: Readonly<Record<string, () => AnyModel>> = {
  register: () => register(),
  'cas-register': () => casRegister(),
  kv: () => kv(),
  mutex: () => mutex(),
  'fenced-register': () => fencedRegister(),
  set: () => set(),
  'multi-register': () => multiRegister(),
};

/** A built-in model by name, or undefined; `Object.keys(builtinModels)` lists the names. */
export function modelByName(name: string): AnyModel | undefined {
  return Object.hasOwn(builtinModels, name) ? builtinModels[name]?.() : undefined;
}
