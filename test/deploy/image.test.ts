// run-tests: parallel
// The container image, built from the repository's Dockerfile with podman and run as a user runs
// it: a read-only root with the documented volume (/var/lib/matte) and a tmpfs /tmp; /healthz, an
// edit and a cut-out over HTTP; no process as root; the HEALTHCHECK; two containers sharing one
// results volume (a result stored through one downloads from the other); SIGTERM with a job in
// flight, which is answered or refused cleanly before the container exits within the shutdown
// timeout; and what the image must not hold (a compiler, a -dev package, npm and its cache, tests).
// No registry is reachable here: scripts/container-base.sh makes the base images the Dockerfile
// names (cached under ~/.cache/matte/container). Containers use the host's network (these machines
// cannot publish ports) and listen on loopback only. podman, runc and mmdebstrap are test-only
// tools that .ci/run installs; without them this suite skips with one line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { dockerfileRuntime, findTool, ROOT } from '../helpers/deploy.js';
import { decode, disc, gradient, pixel } from '../helpers/images.js';
import { freePort } from '../helpers/ports.js';
import { get, post, TEST_KEY, waitForJobs } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const execFileAsync = promisify(execFile);
const IMAGE = 'localhost/matte:test';
const STAGES = ['build', 'install'];
const MAX_IMAGE_BYTES = 480e6;
const SHUTDOWN_SECONDS = 10;
const SLOW = JSON.stringify([{ resize: { width: 3000, height: 3000, fit: 'cover' } }, { blur: 40 }]);
const RUN_ID = randomBytes(4).toString('hex');
const VOLUME = `matte-test-results-${RUN_ID}`;

function skipReason(): string | undefined {
  // The image holds its own build of the addon: the ASan pass has nothing more to check here.
  if (process.env.MATTE_SANITIZER_LOG_DIR) return 'the ASan pass would rebuild and run the same image';
  const missing = [['podman', '/usr/bin/podman'], ['runc', '/usr/sbin/runc'], ['mmdebstrap', '/usr/bin/mmdebstrap']].filter(([, path]) => !findTool(path!));
  if (missing.length) return `${missing.map(([name]) => name).join(', ')} not installed (.ci/run installs them: apt-get install podman runc mmdebstrap)`;
  return undefined;
}

/** podman as these machines run it (scripts/podman.sh). */
async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await execFileAsync('sh', [`${ROOT}scripts/podman.sh`, ...args], { cwd: ROOT, timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 });
    return stdout;
  } catch (err: any) {
    throw new Error(`podman ${args.join(' ')} failed (${err.code ?? err.signal}):\n${String(err.stdout).slice(-4000)}\n${String(err.stderr).slice(-4000)}`);
  }
}

interface Container {
  name: string;
  url: string;
}

/** Runs the image as documented: read-only root, the state volume, a tmpfs /tmp, no root. */
async function runContainer(label: string, env: Record<string, string> = {}): Promise<Container> {
  const port = await freePort();
  const name = `matte-test-${RUN_ID}-${label}`;
  const settings = {
    HOST: '127.0.0.1',
    PORT: String(port),
    MATTE_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
    MATTE_API_KEYS: TEST_KEY,
    MATTE_PUBLIC_URL: `http://127.0.0.1:${port}`,
    MATTE_SHUTDOWN_TIMEOUT_SECONDS: String(SHUTDOWN_SECONDS),
    ...env,
  };
  await podman(['run', '--detach', '--name', name, '--network=host', '--read-only', '--tmpfs', '/tmp', '--volume', `${VOLUME}:/var/lib/matte`, ...Object.entries(settings).flatMap(([k, v]) => ['--env', `${k}=${v}`]), IMAGE]);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${name} ready`, async () => (await get(url, '/readyz')).status === 200, { timeoutMs: 120_000, intervalMs: 250 });
  } catch (err) {
    throw new Error(`${(err as Error).message}; its log:\n${await podman(['logs', '--tail', '30', name]).catch((e) => e.message)}`);
  }
  return { name, url };
}

const skip = skipReason();
if (skip) {
  console.log(`skip image: ${skip}`);
} else {
  let first: Container;
  let second: Container;

  test.before(async () => {
    const started = Date.now();
    await execFileAsync('sh', [`${ROOT}scripts/container-base.sh`], { cwd: ROOT, timeout: 30 * 60_000, maxBuffer: 64 * 1024 * 1024 });
    const based = Date.now();
    // The first stages get tags of their own so that pruning after the build removes only what no
    // tag leads to (earlier builds' layers), never the layers the next build reuses (apt, npm ci).
    for (const stage of STAGES) await podman(['build', '--format', 'docker', '--network=host', '--target', stage, '--tag', `localhost/matte-${stage}-stage:test`, ROOT], 60 * 60_000);
    await podman(['build', '--format', 'docker', '--network=host', '--tag', IMAGE, ROOT], 60 * 60_000);
    await podman(['image', 'prune', '--force']);
    const built = Date.now();
    await podman(['volume', 'create', VOLUME]);
    console.log(`    image: base images ready in ${((based - started) / 1000).toFixed(0)} s, image built in ${((built - based) / 1000).toFixed(0)} s`);
  });

  test.after(async () => {
    for (const label of ['a', 'b']) await podman(['rm', '--force', '--time', '0', `matte-test-${RUN_ID}-${label}`]).catch(() => {});
    await podman(['volume', 'rm', '--force', VOLUME]).catch(() => {});
  });

  test('the image: its user is not root, a HEALTHCHECK, OCI labels, at most 480 MB', async () => {
    const [inspected] = JSON.parse(await podman(['image', 'inspect', IMAGE]));
    const config = inspected.Config;
    assert.is(config.User, dockerfileRuntime().user);
    assert.not.match(config.User, /^(0|root)(:|$)/);
    assert.match((inspected.Healthcheck ?? config.Healthcheck)?.Test?.join(' ') ?? '', /\/readyz/, 'the HEALTHCHECK is kept (--format docker)');
    for (const label of ['source', 'version', 'licenses']) assert.ok(config.Labels[`org.opencontainers.image.${label}`], `label ${label}`);
    assert.equal(config.Entrypoint, ['/usr/bin/tini', '--'], 'PID 1 passes signals on and reaps');
    console.log(`    image size: ${(inspected.Size / 1e6).toFixed(1)} MB uncompressed (linux/${inspected.Architecture})`);
    assert.ok(inspected.Size <= MAX_IMAGE_BYTES, `${inspected.Size} bytes`);
  });

  test('the image holds no compiler, no -dev package, no npm or npm cache, no test files', async () => {
    const script = [
      'for tool in cc gcc g++ c++ clang make cmake npm npx; do command -v $tool; done',
      "dpkg-query -W -f '${Package}\\n' | grep -- '-dev$'",
      // matte's own tests and benches (its dependencies' packages are as npm installs them).
      "find /opt/matte/node_modules/matte /opt/matte/node_modules/@matte \\( -name '*.test.*' -o -name test -o -name bench -o -name fuzz -o -name 'matte_probes.node' \\) -print",
      "find / -xdev \\( -name '_cacache' -o -name '.npm' -o -name 'test-output' \\) -print",
      'true',
    ].join('; ');
    const found = (await podman(['run', '--rm', '--network=none', '--entrypoint', 'sh', IMAGE, '-c', script])).trim();
    assert.is(found, '', `found:\n${found}`);
    const model = await podman(['run', '--rm', '--network=none', '--entrypoint', 'sh', IMAGE, '-c', 'ls $MATTE_MODELS_DIR']);
    assert.match(model, /u2netp\.onnx/, 'the default model is baked in');
  });

  test('read-only, with the documented volume: /healthz, an edit and a cut-out over HTTP; no process is root', async () => {
    first = await runContainer('a', { MATTE_CONCURRENCY: '1' });
    assert.is((await get(first.url, '/healthz')).status, 200);
    const edited = await post(first.url, '/images/edit', { input: gradient(64, 48), operations: '[{"resize":{"width":32}},{"flip":"h"}]', format: 'png', output: 'raw' });
    assert.is(edited.status, 200, edited.body.toString());
    const editImage = await decode(edited.body);
    assert.equal([editImage.width, editImage.height], [32, 24]);
    const cut = await post(first.url, '/images/remove-background', { input: disc(240, 180, 50, [30, 90, 220], [255, 255, 255], { alpha: false }), output: 'raw' });
    assert.is(cut.status, 200, cut.body.toString());
    const cutout = await decode(cut.body);
    assert.ok(cutout.hasAlpha);
    assert.ok(pixel(cutout, 120, 90)[3] > 200, 'the subject is kept');
    assert.ok(pixel(cutout, 5, 5)[3] < 30, 'the background is removed');
    const uids = await podman(['exec', first.name, 'sh', '-c', 'grep -H "^Uid:" /proc/[0-9]*/status']);
    const processes = uids.trim().split('\n').filter((line) => !line.startsWith('/proc/self/') && !line.includes('thread-self'));
    assert.ok(processes.length >= 2, uids);
    for (const line of processes) assert.not.match(line, /Uid:\s+0\s/, `a process runs as root: ${line}`);
    const written = await podman(['exec', first.name, 'sh', '-c', 'touch /opt/matte/x 2>&1 || echo refused']);
    assert.match(written, /refused/, 'the root file system is read-only');
    await podman(['healthcheck', 'run', first.name]);
  });

  test('two containers on one results volume: a result stored through one downloads from the other', async () => {
    second = await runContainer('b');
    const stored = await post(first.url, '/images/edit', { input: gradient(64, 48), operations: '[{"flip":"v"}]', format: 'png' });
    assert.is(stored.status, 200, stored.body.toString());
    const { url } = stored.json();
    const fromFirst = await get(first.url, new URL(url).pathname);
    const fromSecond = await get(second.url, new URL(url).pathname);
    assert.is(fromSecond.status, 200, fromSecond.body.toString());
    assert.ok(fromSecond.body.equals(fromFirst.body), 'the same bytes');
  });

  test('SIGTERM with a job in flight: answered or refused cleanly, the container exits 0 within the shutdown timeout', async () => {
    const inFlight = post(first.url, '/images/edit', { input: gradient(64, 48), operations: SLOW, format: 'jpeg', output: 'raw' });
    await waitForJobs(first.url, 1, 0, 30_000);
    const signalled = Date.now();
    await podman(['kill', '--signal', 'TERM', first.name]);
    const reply = await inFlight;
    const exitCode = (await podman(['wait', first.name], (SHUTDOWN_SECONDS + 30) * 1000)).trim();
    const seconds = (Date.now() - signalled) / 1000;
    assert.is(exitCode, '0');
    // matte's last resort kills itself 3 s after the timeout; the container must end before that.
    assert.ok(seconds < SHUTDOWN_SECONDS + 3, `exited ${seconds.toFixed(1)} s after SIGTERM`);
    if (reply.status === 200) assert.is((await decode(reply.body)).width, 3000);
    else {
      assert.is(reply.status, 503, reply.body.toString());
      assert.is(reply.json().error.code, 'shutting_down');
    }
    const logs = await podman(['logs', first.name]);
    assert.match(logs, /shutting down/);
    // Errors other than the 503s a client was answered (not ready while the model loaded, or
    // shutting down): a failed shutdown, a crash, the last resort's kill.
    const errors = logs.split('\n').filter((line) => /"level":(50|60)/.test(line) && !(/"msg":"request failed"/.test(line) && /"status":503/.test(line)));
    assert.equal(errors, [], 'no error in the log');
    assert.match(logs, /"msg":"stopped"/);
    console.log(`    SIGTERM -> exit 0 in ${seconds.toFixed(1)} s; the job in flight got ${reply.status}`);
  });
}

test.run();
