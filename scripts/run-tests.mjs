// Runs every compiled uvu suite (dist/test/**/*.test.js), each file in its own process so that a
// crash is one failure rather than the end of the run, and ends with the plain summary line
// `N passed, N failed` (N skipped when any). Exits non-zero when a test failed or none ran.
// Arguments filter the files by substring, e.g. `node scripts/run-tests.mjs schema`.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function findTests(dir) {
  let out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out = out.concat(findTests(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

// Sanitizer reports (npm run test:asan): a suite fails when its output holds one, or when any of its
// processes, grandchildren included, left a report file in MATTE_SANITIZER_LOG_DIR
// (scripts/asan-env.sh); the exit code alone is not enough, a report in a child process may not
// reach the suite's own status.
const SANITIZER_REPORT = /ERROR: (AddressSanitizer|LeakSanitizer)|: runtime error: |AddressSanitizer:DEADLYSIGNAL/;
const sanitizerLogDir = process.env.MATTE_SANITIZER_LOG_DIR;

function sanitizerReports() {
  if (!sanitizerLogDir) return '';
  let text = '';
  for (const name of readdirSync(sanitizerLogDir).sort()) {
    const path = join(sanitizerLogDir, name);
    text += `--- ${name}\n${readFileSync(path, 'utf8')}\n`;
    rmSync(path);
  }
  return text;
}

// ORT_DISABLE_TELEMETRY: suites that load onnxruntime-node (parity, beside) must not queue or upload
// ONNX Runtime telemetry either; matte sets it for itself (lib/telemetry.ts, tested without it).
function runFile(file) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ORT_DISABLE_TELEMETRY: '1', ...process.env, FORCE_COLOR: '0' } });
    let output = '';
    child.stdout.on('data', (d) => { output += d; process.stdout.write(d); });
    child.stderr.on('data', (d) => { output += d; process.stderr.write(d); });
    child.on('close', (code, signal) => {
      const reports = sanitizerReports();
      if (reports) process.stdout.write(reports);
      const resolve = (r) => done(reports || SANITIZER_REPORT.test(output) ? { ...r, failed: Math.max(1, r.failed), note: `${file}: sanitizer report` } : r);
      const number = (label) => Number((output.match(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'm')) || [])[1] ?? NaN);
      const total = number('Total');
      const passed = number('Passed');
      const skipped = number('Skipped') || 0;
      if (Number.isNaN(total) || Number.isNaN(passed)) {
        // The suite died before uvu printed its summary: one failure for the file.
        resolve({ passed: 0, failed: 1, skipped: 0, note: `${file}: exited with ${signal ?? code} before its summary` });
        return;
      }
      // uvu's Total counts the tests that ran; Skipped ones are not in it.
      let failed = total - passed;
      if (code !== 0 && failed === 0) failed = 1;
      resolve({ passed, failed, skipped, note: failed ? `${file}: ${failed} failed` : '' });
    });
  });
}

const files = findTests(join(root, 'dist', 'test')).filter((f) => !filters.length || filters.some((s) => f.includes(s)));
let passed = 0, failed = 0, skipped = 0;
const notes = [];
for (const file of files) {
  console.log(`\n# ${file.slice(root.length)}`);
  const r = await runFile(file);
  passed += r.passed; failed += r.failed; skipped += r.skipped;
  if (r.note) notes.push(r.note);
}
if (notes.length) console.log(`\nFailures:\n  ${notes.join('\n  ')}`);
if (passed + failed === 0) {
  console.log('no test ran');
  failed = 1;
}
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed ? 1 : 0);
