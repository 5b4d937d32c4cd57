// POST /images/edit (docs/api.md, "Operations (edit)"): an ordered list of 1..20 operations on one image.
import type Router from '@koa/router';
import {
  editSteps,
  FORMAT_CHOICES,
  MatteError,
  parseBooleanField,
  parseEnumField,
  parseModelField,
  parseQualityField,
} from '../../lib/index.js';
import { HttpError } from '../errors.js';
import { parseOperationsMemo } from '../operations-memo.js';
import type { Services } from '../services.js';
import { backgroundImageBytes, backgroundImageField, inputBytes, outputField, readImageForm, resolveMatting, runJob, sendResult } from './images.js';
import type { Middleware } from 'koa';

export const EDIT_FIELDS = ['input', 'operations', 'output', 'format', 'quality', 'anim', 'refine', 'model', 'background_image'] as const;

export function editRoute(router: Router, services: Services, guards: Middleware[]): void {
  router.post('/images/edit', ...guards, async (ctx) => {
    const form = await readImageForm(ctx, services, EDIT_FIELDS);
    const { fields } = form;
    // Every field is validated before the input is fetched or any pixel is touched.
    const output = outputField(form);
    const format = fields.format === undefined ? 'png' : parseEnumField('format', FORMAT_CHOICES, fields.format);
    const quality = fields.quality === undefined ? undefined : parseQualityField(fields.quality);
    const anim = fields.anim === undefined ? true : parseBooleanField('anim', fields.anim);
    // refine and model apply to a removeBackground operation that does not set its own.
    const refine = fields.refine === undefined ? undefined : parseBooleanField('refine', fields.refine);
    const model = fields.model === undefined ? undefined : parseModelField(fields.model);
    if (fields.operations === undefined) {
      throw new HttpError(400, 'invalid_operations', 'operations is required: a JSON array of 1 to 20 operations', { path: 'operations' });
    }
    const steps = parseOperationsMemo(fields.operations); // validated once per distinct text
    checkBackgroundImage(steps.findIndex((s) => s.op === 'backgroundImage'), form.backgroundImage !== undefined || fields.background_image !== undefined);
    const matting = await resolveMatting(steps, services, refine, model);
    const input = await inputBytes(form, services);
    const backgroundImage = await backgroundImageBytes(form, services, input);
    if (matting) {
      ctx.state.model = matting.model; // the metrics label of the job (server/metrics.ts)
      await services.model.ensure();
    }
    const result = await runJob(ctx, services, (control) =>
      editSteps(input, steps, { format, quality, anim, limits: services.limits, matteCache: services.matteCache, handOver: true, backgroundImage, ...control }).catch((err) => {
        throw backgroundImageField(err);
      }),
    );
    await sendResult(ctx, services, result, output);
  });
}

/** A backgroundImage operation needs the background_image field, and the field needs the operation. */
function checkBackgroundImage(index: number, given: boolean): void {
  if (index >= 0 && !given) {
    const path = `operations[${index}].backgroundImage`;
    throw new MatteError('invalid_operations', `${path} needs a background image: the background_image field (a file or an http(s) URL)`, path);
  }
  if (index < 0 && given) throw new MatteError('invalid_field', 'background_image is given, but no backgroundImage operation uses it', 'background_image');
}
