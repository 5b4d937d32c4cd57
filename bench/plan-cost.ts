// The cost of one operation list, for the "Cost before pixels" figures of docs/api.md: one run of
// the plan on a 512x512 PNG through the library, with no time budget, in this process; prints wall
// and CPU seconds (CPU is the figure to compare on a shared machine) and the peak RSS.
//
//   node dist/bench/plan-cost.js '[{"resize":{"width":5000,"height":5000,"fit":"cover"}},{"blur":250}]' [format]
import { configure, edit, type OutputFormat } from '../lib/index.js';
import { gradient } from '../test/helpers/images.js';

const [operations, format = 'png'] = process.argv.slice(2);
if (!operations) {
  process.stderr.write('usage: node dist/bench/plan-cost.js \'<operations JSON>\' [format]\n');
  process.exit(2);
}
configure({ concurrency: 1 }); // the job may use every core, as one job alone on the server does
const input = gradient(512, 512);
const cpu = process.cpuUsage();
const started = performance.now();
let outcome: string;
try {
  const result = await edit(input, JSON.parse(operations), { format: format as OutputFormat, timeout: 0 });
  outcome = `${result.width}x${result.height}`;
} catch (err) {
  outcome = `${(err as { code?: string }).code}: ${(err as Error).message}`;
}
const used = process.cpuUsage(cpu);
const wall = (performance.now() - started) / 1000;
process.stdout.write(
  `${wall.toFixed(2)} s wall, ${((used.user + used.system) / 1e6).toFixed(2)} s CPU, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB, ${outcome}  ${operations} ${format}\n`,
);
