// POST /images/remove-background (service-spec 4.2, decisions.md section 6).
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { MATTE_FORMATS, parseBooleanField, parseEnumField, removeBackground } from '../../lib/index.js';
import type { Services } from '../services.js';
import { inputBytes, outputField, readImageForm, runJob, sendResult } from './images.js';

/** No `quality` (webp is encoded at the default 80, decisions.md 6) and no `anim`: both are unknown fields (400). */
export const REMOVE_BACKGROUND_FIELDS = ['input', 'output', 'format', 'trim'] as const;

export function removeBackgroundRoute(router: Router, services: Services, guards: Middleware[]): void {
  router.post('/images/remove-background', ...guards, async (ctx) => {
    const form = await readImageForm(ctx, services, REMOVE_BACKGROUND_FIELDS);
    const { fields } = form;
    const output = outputField(form);
    const format = fields.format === undefined ? 'png' : parseEnumField('format', MATTE_FORMATS, fields.format);
    const trim = fields.trim === undefined ? false : parseBooleanField('trim', fields.trim);
    const input = await inputBytes(form, services);
    await services.model.ensure();
    const result = await runJob(ctx, services, (control) => removeBackground(input, { format, trim, limits: services.limits, ...control }));
    await sendResult(ctx, services, result, output);
  });
}
