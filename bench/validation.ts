// The slowest validation seen: every validator a request's text reaches (the operations JSON and the
// values nested in it, each form field's parser, the input URL, the Range header) fed the
// adversarial texts of the property tests (test/helpers/adversarial-text.ts) at lengths up to the
// field limit, in this process. Prints the slowest text per validator and the slowest overall; a
// validator that is worse than linear shows as milliseconds (the 65,000-digit rgb() took 4.5 s
// before colours were bounded). CPU time, the least of three tries of each text. Runs in a few
// seconds; not part of `npm run bench`.
//
//   node dist/bench/validation.js
import { parseBooleanField, parseEnumField, parseModelField, parseOperationsJson, parseQualityField, OUTPUT_FORMATS } from '../lib/index.js';
import { parseColor } from '../lib/color.js';
import { parseInputUrl } from '../server/input/fetch.js';
import { MAX_FIELD_BYTES } from '../server/input/form.js';
import { parseRange } from '../server/routes/results.js';
import { adversarialText, COLOUR_FUNCTIONS } from '../test/helpers/adversarial-text.js';

const validators: Record<string, (text: string) => unknown> = {
  'operations (raw text)': (t) => parseOperationsJson(t),
  'operations[].background': (t) => parseOperationsJson(JSON.stringify([{ background: t }])),
  'operations[].removeBackground.model': (t) => parseOperationsJson(JSON.stringify([{ removeBackground: { model: t } }])),
  'operations[].resize.fit': (t) => parseOperationsJson(JSON.stringify([{ resize: { width: 1, fit: t } }])),
  parseColor: (t) => parseColor(t),
  'quality field': (t) => parseQualityField(t),
  'boolean fields': (t) => parseBooleanField('anim', t),
  'enum fields': (t) => parseEnumField('format', OUTPUT_FORMATS, t),
  'model field': (t) => parseModelField(t),
  'input URL': (t) => parseInputUrl(t),
  'Range header (16 KiB)': (t) => parseRange(`bytes=${t.slice(0, 16_000)}`, 1000),
};

const lengths = [64, 1024, 16_384, MAX_FIELD_BYTES - 200];
let worst = { ms: 0, validator: '', text: '' };
process.stdout.write(`validator                          slowest CPU ms  text\n`);
for (const [name, validate] of Object.entries(validators)) {
  let slowest = { ms: 0, text: '' };
  for (let shape = 0; shape < 8; shape++) {
    for (const fn of COLOUR_FUNCTIONS) {
      for (const length of lengths) {
        const text = adversarialText(shape, fn, length);
        // CPU time, the least of three tries: on a shared machine wall time measures the neighbours.
        let ms = Infinity;
        for (let i = 0; i < 3; i++) {
          const cpu = process.cpuUsage();
          try {
            validate(text);
          } catch {
            // refused: what is measured is how long the refusal took
          }
          const used = process.cpuUsage(cpu);
          ms = Math.min(ms, (used.user + used.system) / 1000);
        }
        if (ms > slowest.ms) slowest = { ms, text: `${text.slice(0, 24)}... (${text.length} chars)` };
      }
    }
  }
  process.stdout.write(`${name.padEnd(38)} ${slowest.ms.toFixed(2).padStart(10)}  ${slowest.text}\n`);
  if (slowest.ms > worst.ms) worst = { ms: slowest.ms, validator: name, text: slowest.text };
}
process.stdout.write(`\nslowest validation seen: ${worst.ms.toFixed(2)} ms, ${worst.validator}, ${worst.text}\n`);
