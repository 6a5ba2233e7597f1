import { execFile } from 'node:child_process';
import type { Provider } from '../backends/types.js';

/** True when a Docker engine answers within a few seconds. */
export function dockerAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5_000 }, (error) =>
      resolve(!error),
    );
  });
}

/**
 * `auto` picks docker when an engine answers and local otherwise (the local provider is the one that
 * always works here). An explicit `docker` without an engine is an error that says how to get one.
 */
export async function resolveProvider(requested: 'auto' | Provider): Promise<Provider> {
  if (requested === 'local' || requested === 'external' || requested === 'ssh') return requested;
  const docker = await dockerAnswers();
  if (requested === 'auto') return docker ? 'docker' : 'local';
  if (!docker) {
    throw new Error(
      'no Docker engine answers: install it (apt-get install docker.io) and start it (dockerd &), ' +
        'or use --provider local',
    );
  }
  return 'docker';
}
