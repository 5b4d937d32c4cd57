// Runs one call of remove.bg's official Node client (npm remove.bg), unchanged, and prints what it
// resolved or rejected with as one JSON line. Started by removebg-client.ts with the environment
// that points the client's https://api.remove.bg at matte (HTTPS_PROXY, NODE_EXTRA_CA_CERTS).
import { createRequire } from 'node:module';

type Call = 'removeBackgroundFromImageFile' | 'removeBackgroundFromImageUrl' | 'removeBackgroundFromImageBase64';
const client = createRequire(import.meta.url)('remove.bg') as Record<Call, (options: object) => Promise<Record<string, unknown>>>;
const { call, options } = JSON.parse(process.argv[2]!) as { call: Call; options: object };
try {
  const { base64img, ...rest } = await client[call](options);
  process.stdout.write(`${JSON.stringify({ ok: true, result: { ...rest, base64Length: typeof base64img === 'string' ? base64img.length : undefined } })}\n`);
} catch (errors) {
  process.stdout.write(`${JSON.stringify({ ok: false, errors: errors instanceof Error ? errors.message : errors })}\n`);
}
