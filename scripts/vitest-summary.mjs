// Reads Vitest's JSON report and prints the closing line CI reads: "vitest: N passed, N failed, N skipped".
// Exits non-zero when the report is missing, a test failed, or no test ran at all.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.vitest-results.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.error(`vitest-summary: cannot read ${file}: ${error.message}`);
  console.log('vitest: 0 passed, 1 failed');
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
// A test file that could not even load (syntax error, failing import, crashed hook) has no tests of
// its own to count as failed: count it once so it can never pass silently.
let failed = report.numFailedTests ?? 0;
for (const file of report.testResults ?? []) {
  const failedTests = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
  for (const t of failedTests) console.error(`FAILED: ${file.name} > ${t.fullName}`);
  if (file.status === 'failed' && failedTests.length === 0) {
    failed += 1;
    console.error(`FAILED to run: ${file.name}: ${(file.message ?? '').split('\n')[0]}`);
  }
}
console.log(`vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (passed === 0) console.error('vitest-summary: no test ran');
process.exit(failed > 0 || passed === 0 ? 1 : 0);
