import type { TestProject } from 'vitest/node';
import { startRedis } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisEndpoint: string;
  }
}

/** One redis-server shared by this package's test files; each test uses its own resource names. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startRedis();
  project.provide('redisEndpoint', server.endpoint);
  return () => server.stop();
}
