// Runs every compiled uvu suite (dist/test/**/*.test.js), each file in its own process so that a
// crash is one failure rather than the end of the run, and ends with the plain summary line
// `N passed, N failed` (N skipped when any). Exits non-zero when a test failed or none ran.
// Arguments filter the files by substring, e.g. `node scripts/run-tests.mjs schema`.
//
// Files run two at a time (MATTE_TEST_JOBS), but only those whose source says
//   // run-tests: parallel
// (it listens on port 0, writes only to its temporary directories, asserts no duration and does
// not load the whole machine). Any other file runs alone, nothing beside it: a new file is safe
// until its author says otherwise. A running file's output is held and printed whole when it ends.
// The run ends with the slowest files, their wall time and the CPU time of their processes.
//
// MATTE_TEST_RECORD (.ci/run): the normal pass writes there, per file, whether any of its processes
// (children included) loaded matte's addon, and how long the file took; the ASan pass
// (MATTE_SANITIZER_LOG_DIR set) reads it, skips with one line each the files shown not to load it,
// since ASan sees nothing in them, and starts the longest files first.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
const jobs = Math.max(1, Number(process.env.MATTE_TEST_JOBS) || Math.min(2, availableParallelism()));
// A file still running after this is killed and counted failed (uvu has no timeout of its own).
const fileTimeoutMs = (Number(process.env.MATTE_TEST_FILE_TIMEOUT_SECONDS) || 45 * 60) * 1000;
const PARALLEL = /^\/\/ run-tests: parallel\b/m;

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
// reach the suite's own status. Each file gets a directory of its own in there, so that a report
// is charged to the file that made it while another runs beside it.
const SANITIZER_REPORT = /ERROR: (AddressSanitizer|LeakSanitizer)|: runtime error: |AddressSanitizer:DEADLYSIGNAL/;
const sanitizerLogDir = process.env.MATTE_SANITIZER_LOG_DIR;

function sanitizerReports(dir) {
  if (!dir) return '';
  let text = '';
  for (const name of readdirSync(dir).sort()) text += `--- ${name}\n${readFileSync(join(dir, name), 'utf8')}\n`;
  rmSync(dir, { recursive: true, force: true });
  return text;
}

// Which files load the addon: a preload in every Node process of the normal pass (NODE_OPTIONS,
// which children inherit as they inherit the ASan pass's LD_PRELOAD) notes each matte*.node it opens.
const recordPath = process.env.MATTE_TEST_RECORD;
const asanPass = Boolean(sanitizerLogDir);
const recorded = asanPass && recordPath && existsSync(recordPath) ? JSON.parse(readFileSync(recordPath, 'utf8')) : undefined;
const recording = !asanPass && recordPath ? {} : undefined;
const scratch = mkdtempSync(join(tmpdir(), 'matte-run-tests-'));
const preload = join(root, 'scripts/test-addon-record.cjs');

// CPU time of this runner's children that were waited for (user + sys, /proc/self/stat: cutime and
// cstime in clock ticks); a file's share is the growth while it ran and when it ended.
function childrenCpuSeconds() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

// ORT_DISABLE_TELEMETRY: suites that load onnxruntime-node (parity, beside) must not queue or upload
// ONNX Runtime telemetry either; matte sets it for itself (lib/telemetry.ts, tested without it).
function runFile(file, id, live) {
  return new Promise((done) => {
    const env = { ORT_DISABLE_TELEMETRY: '1', ...process.env, FORCE_COLOR: '0' };
    const addonRecord = join(scratch, `${id}.addon`);
    if (recording) {
      env.MATTE_TEST_ADDON_RECORD = addonRecord;
      env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require "${preload}"`.trim();
    }
    const reportDir = sanitizerLogDir ? join(sanitizerLogDir, `file-${id}`) : undefined;
    if (reportDir) {
      rmSync(reportDir, { recursive: true, force: true });
      mkdirSync(reportDir);
      env.MATTE_SANITIZER_LOG_DIR = reportDir;
      env.ASAN_OPTIONS = (env.ASAN_OPTIONS ?? '').replaceAll(`log_path=${sanitizerLogDir}/`, `log_path=${reportDir}/`);
      env.UBSAN_OPTIONS = (env.UBSAN_OPTIONS ?? '').replaceAll(`log_path=${sanitizerLogDir}/`, `log_path=${reportDir}/`);
    }
    const started = Date.now();
    const child = spawn(process.execPath, [file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
    let output = '';
    const timer = setTimeout(() => {
      output += `\nrun-tests: killed after ${fileTimeoutMs / 1000} s\n`;
      child.kill('SIGKILL');
    }, fileTimeoutMs);
    child.stdout.on('data', (d) => { output += d; if (live) process.stdout.write(d); });
    child.stderr.on('data', (d) => { output += d; if (live) process.stderr.write(d); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const wall = (Date.now() - started) / 1000;
      const reports = sanitizerReports(reportDir);
      const shown = live ? '' : output;
      const finish = (r) => {
        const failed = reports || SANITIZER_REPORT.test(output) ? { ...r, failed: Math.max(1, r.failed), note: `${file}: sanitizer report` } : r;
        done({ ...failed, wall, output: shown + (reports ? reports : ''), loadedAddon: existsSync(addonRecord), complete: failed.complete ?? true });
      };
      const number = (label) => Number((output.match(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'm')) || [])[1] ?? NaN);
      const total = number('Total');
      const passed = number('Passed');
      const skipped = number('Skipped') || 0;
      if (Number.isNaN(total) || Number.isNaN(passed)) {
        // The suite died before uvu printed its summary: one failure for the file.
        finish({ passed: 0, failed: 1, skipped: 0, complete: false, note: `${file}: exited with ${signal ?? code} before its summary` });
        return;
      }
      // uvu's Total counts the tests that ran; Skipped ones are not in it.
      let failed = total - passed;
      if (code !== 0 && failed === 0) failed = 1;
      finish({ passed, failed, skipped, note: failed ? `${file}: ${failed} failed` : '' });
    });
  });
}

const files = findTests(join(root, 'dist', 'test')).filter((f) => !filters.length || filters.some((s) => f.includes(s)));
const rel = (file) => file.slice(root.length);
let passed = 0, failed = 0, skipped = 0;
const notes = [];
const times = [];

const queue = [];
for (const file of files) {
  const name = rel(file);
  if (recorded?.[name]?.addon === false) {
    console.log(`\n# ${name}: not run under ASan (no process of it loaded matte's addon in the normal pass)`);
    continue;
  }
  queue.push({ file, name, parallel: jobs > 1 && PARALLEL.test(readFileSync(file, 'utf8')) });
}
// Files that run alone go first, then the pool: one drain between them rather than one per file.
// Within each, the longest first when a record says how long they took (else in path order).
const seconds = (name) => recorded?.[name]?.seconds ?? 0;
queue.sort((a, b) => Number(a.parallel) - Number(b.parallel) || seconds(b.name) - seconds(a.name));

let running = 0;
let lastCpu = childrenCpuSeconds();
let id = 0;
await new Promise((allDone) => {
  const next = () => {
    while (queue.length) {
      const head = queue[0];
      if (running && (!head.parallel || running >= jobs)) break;
      queue.shift();
      running++;
      const live = !head.parallel;
      if (live) console.log(`\n# ${head.name}`);
      runFile(head.file, id++, live).then((r) => {
        running--;
        const cpuNow = childrenCpuSeconds();
        const cpu = cpuNow - lastCpu;
        lastCpu = cpuNow;
        if (!live) process.stdout.write(`\n# ${head.name}\n${r.output}`);
        passed += r.passed; failed += r.failed; skipped += r.skipped;
        if (r.note) notes.push(r.note);
        times.push({ name: head.name, wall: r.wall, cpu });
        if (recording && r.complete) recording[head.name] = { addon: r.loadedAddon, seconds: Math.round(r.wall) };
        if (!queue.length && !running) allDone();
        else next();
      });
      if (live) break;
    }
  };
  if (queue.length) next();
  else allDone();
});
rmSync(scratch, { recursive: true, force: true });
if (recording) writeFileSync(recordPath, `${JSON.stringify(recording, null, 1)}\n`);

const slowest = times.sort((a, b) => b.wall - a.wall).slice(0, 12);
if (slowest.length > 1) {
  const total = (key) => times.reduce((sum, t) => sum + t[key], 0).toFixed(0);
  console.log(`\nSlowest files (seconds: wall, CPU of its processes; ${times.length} files, ${total('wall')} s wall and ${total('cpu')} s CPU in all, ${jobs} at a time):`);
  for (const t of slowest) console.log(`  ${t.wall.toFixed(1).padStart(6)} ${t.cpu.toFixed(1).padStart(6)}  ${t.name}`);
}
if (process.env.MATTE_TEST_TIMES) writeFileSync(process.env.MATTE_TEST_TIMES, `${JSON.stringify(times)}\n`);
if (notes.length) console.log(`\nFailures:\n  ${notes.join('\n  ')}`);
if (passed + failed === 0) {
  console.log('no test ran');
  failed = 1;
}
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed ? 1 : 0);
