// POST /images/remove-background (docs/api.md, "Routes" and "The form (both image endpoints)").
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { CHANNELS, MATTE_FORMATS, MatteError, parseBooleanField, parseEnumField, parseModelField, parseTrimMarginField, removeBackground } from '../../lib/index.js';
import type { Services } from '../services.js';
import { inputBytes, outputField, readImageForm, runJob, sendResult } from './images.js';

/** No `quality` (webp is encoded at the default 80, docs/api.md, "The form (both image endpoints)") and no `anim`: both are unknown fields (400). */
export const REMOVE_BACKGROUND_FIELDS = ['input', 'output', 'format', 'trim', 'trim_margin', 'channels', 'refine', 'model'] as const;

export function removeBackgroundRoute(router: Router, services: Services, guards: Middleware[]): void {
  router.post('/images/remove-background', ...guards, async (ctx) => {
    const form = await readImageForm(ctx, services, REMOVE_BACKGROUND_FIELDS);
    const { fields } = form;
    const output = outputField(form);
    const format = fields.format === undefined ? 'png' : parseEnumField('format', MATTE_FORMATS, fields.format);
    const trim = fields.trim === undefined ? false : parseBooleanField('trim', fields.trim);
    const trimMargin = fields.trim_margin === undefined ? undefined : parseTrimMarginField(fields.trim_margin);
    if (trimMargin && !trim) throw new MatteError('invalid_field', 'trim_margin needs trim=true (the margin is around the trimmed subject)', 'trim_margin');
    const channels = fields.channels === undefined ? 'rgba' : parseEnumField('channels', CHANNELS, fields.channels);
    const refine = fields.refine === undefined ? true : parseBooleanField('refine', fields.refine);
    const model = await services.model.check(fields.model === undefined ? undefined : parseModelField(fields.model));
    const input = await inputBytes(form, services);
    ctx.state.model = model; // the metrics label of the job (server/metrics.ts)
    await services.model.ensure();
    const result = await runJob(ctx, services, (control) => removeBackground(input, { format, trim, trimMargin: trimMargin && ('pixels' in trimMargin ? trimMargin.pixels : `${trimMargin.percent}%`), channels, refine, model, limits: services.limits, matteCache: services.matteCache, handOver: true, ...control }));
    await sendResult(ctx, services, result, output);
  });
}
