import { parseDuration } from '@fencekit/checker';
import { z } from 'zod';
import { BACKENDS } from '../backends/types.js';
import { zkSessionProblem } from '../backends/zk.js';
import { FAULT_NAMES, FAULTS, type FaultName } from '../nemesis/faults.js';
import { SCENARIO_NAMES, type ScenarioName } from '../nemesis/scenarios.js';
import { WORKLOADS } from '../workloads/types.js';
import { keyPath, nodeList, portInRange, sshHostKeys, sshPort, sshUser } from './ssh-options.js';

/** The one duration syntax of both CLIs (fencekit-check's): "500ms", "30s", "1.5m", "1h", a bare number of seconds. */
export { parseDuration } from '@fencekit/checker';

const faultList = z.string().transform((text, ctx) => {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && s !== 'none');
  for (const name of names) {
    if (!(name in FAULTS)) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown fault "${name}"; known faults: none, ${FAULT_NAMES.join(', ')}`,
      });
      return z.NEVER;
    }
  }
  return [...new Set(names)] as FaultName[];
});

/**
 * `host:port` entries; @fencekit/cluster checks each one strictly when it attaches (`attachCluster`), this only
 * refuses what cannot be an endpoint list at all, as a usage error before anything starts.
 */
const endpointList = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim()))
  .pipe(
    z
      .array(
        z
          .string()
          .regex(/^[^\s/@]+:\d{1,5}$/, { error: 'host:port, no scheme, path or user' })
          .refine(portInRange, { error: 'the port must be from 1 to 65535' }),
      )
      .min(1, { error: 'at least one host:port' })
      .max(7, { error: 'at most 7 endpoints' })
      .refine((list) => new Set(list.map((e) => e.toLowerCase())).size === list.length, {
        error: 'each endpoint once (a server given twice would be counted as two)',
      }),
  );

/** Longer durations make no sense for a run, and the per-operation timeout (4 TTLs) must fit a timer. */
const MAX_DURATION_MS = 86_400_000;

const duration = z
  .union([z.number(), z.string()])
  .transform((value, ctx) => {
    if (typeof value === 'number') return value;
    try {
      return parseDuration(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  })
  // Lock TTLs are whole milliseconds; a number from code is held to what the CLI's parser gives.
  .pipe(
    z
      .number()
      .int({ error: 'a whole number of milliseconds' })
      .positive({ error: 'a positive duration' })
      .max(MAX_DURATION_MS, { error: 'at most one day (86400000 ms)' }),
  );

export const runOptionsSchema = z
  .object({
    backend: z.enum(BACKENDS, { error: () => `unknown backend; known backends: ${BACKENDS.join(', ')}` }),
    workload: z.enum(WORKLOADS, {
      error: () => `unknown workload; known workloads: ${WORKLOADS.join(', ')}`,
    }),
    fault: faultList.default([]),
    scenario: z
      .enum(SCENARIO_NAMES as [ScenarioName, ...ScenarioName[]], {
        error: () => `unknown scenario; known scenarios: ${SCENARIO_NAMES.join(', ')}`,
      })
      .optional(),
    clients: z.coerce.number().int().min(1).max(64).default(5),
    time: duration.default(10_000),
    seed: z.coerce.number().int().min(0).default(1),
    fencing: z.boolean().default(true),
    provider: z.enum(['auto', 'local', 'docker', 'ssh', 'external']).default('auto'),
    /** `--provider ssh`: the machines (host or host:port, comma-separated or a list) and how to log in. */
    nodes: nodeList.optional(),
    sshUser: sshUser.optional(),
    sshKey: keyPath.optional(),
    sshPort: sshPort.optional(),
    sshHostKeys: sshHostKeys.optional(),
    sshKnownHosts: z.string().min(1).optional(),
    /** `--provider external`: the servers' client endpoints (host:port, comma-separated or a list). */
    endpoints: endpointList.optional(),
    out: z.string().min(1).default('reports'),
    ttl: duration.optional(),
    window: duration.default(30),
    stock: z.coerce.number().int().min(1).default(100_000),
    tick: duration.default(100),
    /** ZooKeeper's session timeout, set apart from the TTL (default: max(2 × follower lag, TTL)). */
    session: duration.optional(),
    /** The share of acquires given up while in flight (workloads/cancel.ts); 0 = none, as before. */
    abortRate: z.coerce
      .number({ error: 'a number from 0 to 1' })
      .min(0, { error: 'a number from 0 to 1' })
      .max(1, { error: 'a number from 0 to 1' })
      .default(0),
  })
  .superRefine((options, ctx) => {
    if (options.provider === 'external' && options.endpoints === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['endpoints'],
        message: "--provider external needs the servers' client endpoints: --endpoints host:port,host:port",
      });
    }
    if (options.provider !== 'external' && options.endpoints !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['endpoints'],
        message: 'only --provider external takes endpoints (the other providers start their own servers)',
      });
    }
    if (options.provider === 'ssh' && options.nodes === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['nodes'],
        message: '--provider ssh needs the machines: --nodes host[:port],host[:port],…',
      });
    }
    if (options.provider !== 'ssh') {
      for (const field of [
        'nodes',
        'sshUser',
        'sshKey',
        'sshPort',
        'sshHostKeys',
        'sshKnownHosts',
      ] as const) {
        if (options[field] !== undefined)
          ctx.addIssue({ code: 'custom', path: [field], message: 'only with --provider ssh' });
      }
    }
    if (options.session === undefined) return;
    const problem =
      options.backend === 'zk'
        ? zkSessionProblem(options.session)
        : 'only the zk backend has a session apart from its lock TTL';
    if (problem) ctx.addIssue({ code: 'custom', path: ['session'], message: problem });
  });

export type RunOptionsInput = z.input<typeof runOptionsSchema>;
export type ParsedRunOptions = z.output<typeof runOptionsSchema>;

export class OptionsError extends Error {
  override readonly name = 'OptionsError';
}

/** Validates CLI or API options; every problem is named, one per line. */
export function parseRunOptions(input: RunOptionsInput): ParsedRunOptions {
  const parsed = runOptionsSchema.safeParse(input);
  if (!parsed.success) {
    // Fields are named as the CLI spells them (sshKey → --ssh-key).
    const flag = (path: readonly PropertyKey[]) =>
      path.join('.').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const lines = parsed.error.issues.map((i) => `  --${flag(i.path)}: ${i.message}`);
    throw new OptionsError(`invalid options:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
