// run-tests: parallel
// server/config-scale.ts: the store, S3, quota, metrics key and CORS settings, and the errors
// naming the variable.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../server/config.js';

const base = { MATTE_API_KEYS: 'k' };

test('defaults: the disk store, a 1 GiB quota, no presigning, /metrics on 127.0.0.1:9464 only, no CORS', () => {
  const c = loadConfig(base);
  assert.is(c.resultsStore, 'disk');
  assert.is(c.resultsMaxBytes, 1024 ** 3);
  assert.is(c.resultsPresign, false);
  assert.is(c.s3, undefined);
  assert.is(c.metricsKey, undefined);
  assert.equal(c.metricsAddress, { host: '127.0.0.1', port: 9464 });
  assert.equal(c.corsOrigins, []);
});

test('s3 settings are read (prefix without a leading slash, endpoint normalised, credentials paired)', () => {
  const c = loadConfig({
    ...base,
    MATTE_RESULTS_STORE: 'S3',
    MATTE_S3_BUCKET: 'my-results',
    MATTE_S3_PREFIX: '/matte/results/',
    MATTE_S3_ENDPOINT: 'http://127.0.0.1:9000/',
    MATTE_S3_FORCE_PATH_STYLE: '1',
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'id',
    AWS_SECRET_ACCESS_KEY: 'secret',
    MATTE_RESULTS_PRESIGN: '1',
    MATTE_RESULTS_MAX_BYTES: '1000000',
  });
  assert.is(c.resultsStore, 's3');
  assert.equal(c.s3, { bucket: 'my-results', prefix: 'matte/results/', endpoint: 'http://127.0.0.1:9000', forcePathStyle: true, timeoutMs: 30_000, region: 'eu-west-1', credentials: { accessKeyId: 'id', secretAccessKey: 'secret' } });
  assert.is(c.resultsPresign, true);
  assert.is(c.resultsMaxBytes, 1_000_000);
  assert.is(loadConfig({ ...base, MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'b-1' }).s3?.credentials, undefined, 'the SDK default chain');
});

test('CORS origins and the metrics key', () => {
  assert.equal(loadConfig({ ...base, MATTE_CORS_ORIGINS: 'https://a.example, http://localhost:3000/' }).corsOrigins, ['https://a.example', 'http://localhost:3000']);
  assert.equal(loadConfig({ ...base, MATTE_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  assert.is(loadConfig({ ...base, MATTE_METRICS_KEY: 'm' }).metricsKey, 'm');
});

test('bad values throw ConfigError naming the variable', () => {
  const bad: Array<[Record<string, string>, string]> = [
    [{ MATTE_RESULTS_STORE: 'ftp' }, 'MATTE_RESULTS_STORE'],
    [{ MATTE_RESULTS_STORE: 's3' }, 'MATTE_S3_BUCKET'],
    [{ MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'Bad_Bucket!' }, 'MATTE_S3_BUCKET'],
    [{ MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'b-1', MATTE_S3_ENDPOINT: 'minio:9000' }, 'MATTE_S3_ENDPOINT'],
    [{ MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'b-1', MATTE_S3_ENDPOINT: 'ftp://x' }, 'MATTE_S3_ENDPOINT'],
    [{ MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'b-1', MATTE_S3_ENDPOINT: 'http://u:p@x' }, 'MATTE_S3_ENDPOINT'],
    [{ MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'b-1', MATTE_S3_FORCE_PATH_STYLE: 'maybe' }, 'MATTE_S3_FORCE_PATH_STYLE'],
    [{ MATTE_RESULTS_STORE: 's3', MATTE_S3_BUCKET: 'b-1', AWS_ACCESS_KEY_ID: 'only-the-id' }, 'AWS_ACCESS_KEY_ID'],
    [{ MATTE_RESULTS_PRESIGN: '1' }, 'MATTE_RESULTS_PRESIGN'],
    [{ MATTE_RESULTS_MAX_BYTES: '1GB' }, 'MATTE_RESULTS_MAX_BYTES'],
    [{ MATTE_CORS_ORIGINS: 'app.example.com' }, 'MATTE_CORS_ORIGINS'],
    [{ MATTE_CORS_ORIGINS: 'https://app.example.com/path' }, 'MATTE_CORS_ORIGINS'],
    [{ MATTE_METRICS_KEY: 'has space' }, 'MATTE_METRICS_KEY'],
  ];
  for (const [env, name] of bad) {
    assert.throws(() => loadConfig({ ...base, ...env }), (e: Error) => e instanceof ConfigError && e.message.includes(name), JSON.stringify(env));
  }
});

test.run();
