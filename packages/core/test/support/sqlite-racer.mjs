// One of several processes racing fenced writes to one SQLite key (test/sqlite-race.test.ts).
// Runs the built package: child processes use dist/, which `npm test` builds first.
import { SqliteFencedResource } from '../../dist/sqlite/index.js';

const [file, workerText, workersText, roundsText, startAtText] = process.argv.slice(2);
const [worker, workers, rounds] = [Number(workerText), Number(workersText), Number(roundsText)];
const store = new SqliteFencedResource({ database: file, table: 'race' });
// Start together: process start-up takes longer than the whole run, so without this they would not race.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAtText) - Date.now())));
let accepted = 0;
let refused = 0;
for (let round = 0; round < rounds; round++) {
  // Fences interleave across workers, so every worker keeps losing races to the others.
  const fence = BigInt(round * workers + worker + 1);
  try {
    await store.write('k', Number(fence), fence);
    accepted += 1;
  } catch (error) {
    if (error?.code !== 'stale-fence') throw error;
    refused += 1;
  }
  // Yield between writes so the processes interleave at the database, not in long bursts.
  await new Promise((resolve) => setImmediate(resolve));
}
store.close();
process.stdout.write(JSON.stringify({ accepted, refused }));
