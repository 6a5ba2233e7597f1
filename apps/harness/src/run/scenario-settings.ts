import type { BackendName } from '../backends/types.js';
import type { ScenarioName } from '../nemesis/scenarios.js';
import type { ClientConfig } from '../workloads/types.js';

/**
 * What a run must look like for a scripted scenario to mean anything: the settings it overrides and the
 * backend it requires. A run looks its scenario up once (`scenarioSettings`); a run without a scenario
 * gets `UNSCRIPTED`, so no caller compares scenario names itself.
 */
export interface ScenarioSettings {
  /** The lock TTL unless `--ttl` says otherwise; absent: the backend's default. */
  readonly ttlMs?: number;
  /** How clients take the lock (see acquire.ts). */
  readonly acquire: ClientConfig['acquire'];
  /** Clients wait at each window for the coordinator's go-ahead (see `NemesisContext.nextWindow`). */
  readonly windowAck: boolean;
  /** The one backend the scenario applies to, and why, for the refusal message. */
  readonly backend?: { readonly name: BackendName; readonly why: string };
}

const UNSCRIPTED: ScenarioSettings = { acquire: 'wait', windowAck: false };

const SETTINGS: Record<ScenarioName, ScenarioSettings> = {
  // The frozen client wakes on its own after the pause: nothing to acknowledge, any backend will do.
  'gc-pause': UNSCRIPTED,
  'clock-jump': {
    // Between the holder's grant and the second one lie a SIGSTOP, the network turning, reconnects and
    // a poll: a few hundred milliseconds on a loaded two-core machine, where Redlock's 1 s default left
    // the holder's grant sometimes already expired by its own reckoning, which would make the conviction
    // the pause's doing rather than the clock's.
    ttlMs: 2_000,
    // Each grant must be decided by the nodes' state alone, as Kleppmann's diagram assumes, not by a
    // queue that remembers a waiter across the network turning.
    acquire: 'poll',
    // The holder must be provably stopped before its write, not merely signalled.
    windowAck: true,
    backend: { name: 'redlock', why: 'Redlock’s diagram' },
  },
};

export function scenarioSettings(name: ScenarioName | undefined): ScenarioSettings {
  return name ? SETTINGS[name] : UNSCRIPTED;
}

/**
 * Faults whose exposure needs every grant decided by the nodes' state alone, as node-redlock's retry
 * loop decides it (`acquire: 'poll'`), rather than by a queue: `drift-majority` bites only a grant whose
 * keys were set as it asked, and a queue hands the lock over on a release, setting the keys later than
 * the send the waiter's validity counts from; pollers also ask again within a few ms of a key expiring
 * (`clock-jump-minority`: of a minority's keys vanishing), where a waiter sleeps until a heartbeat, and
 * race each other to a freed lock on every node (`latency-minority`), where a queue orders them.
 */
const POLLED_FAULTS: ReadonlySet<string> = new Set([
  'drift-majority',
  'clock-jump-minority',
  'latency-minority',
]);

/** What a run must look like: its scenario's settings, else polling where a fault needs it, else the default. */
export function runSettings(scenario: ScenarioName | undefined, faults: readonly string[]): ScenarioSettings {
  if (scenario) return SETTINGS[scenario];
  return faults.some((fault) => POLLED_FAULTS.has(fault)) ? { ...UNSCRIPTED, acquire: 'poll' } : UNSCRIPTED;
}
