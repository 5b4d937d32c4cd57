// POST /images/remove-background (docs/api.md, "Routes", "The form (both image endpoints)" and
// "Extensions: staged cut-outs").
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import {
  CHANNELS,
  MatteError,
  REMOVE_BACKGROUND_FORMATS,
  operationValueSchemas,
  parseBooleanField,
  parseEnumField,
  parseJsonField,
  parseModelField,
  parsePlaceField,
  parseRoiField,
  parseShadowField,
  parseSizeField,
  parseTrimMarginField,
  removeBackground,
} from '../../lib/index.js';
import type { Services } from '../services.js';
import { backgroundImageBytes, backgroundImageField, inputBytes, outputField, readImageForm, runJob, sendResult } from './images.js';

/** No `quality` (webp and jpeg are encoded at the default 80, docs/api.md, "The form (both image endpoints)") and no `anim`: both are unknown fields (400). */
export const REMOVE_BACKGROUND_FIELDS = [
  'input',
  'output',
  'format',
  'trim',
  'trim_margin',
  'channels',
  'refine',
  'model',
  // The staging (docs/api.md, "Extensions: staged cut-outs").
  'size',
  'roi',
  'semitransparency',
  'place',
  'shadow',
  'background',
  'background_image',
] as const;

/** Option names of removeBackground() as the form names them, for the errors of a job. */
const FIELD_OF_OPTION: Record<string, string> = { trimMargin: 'trim_margin', backgroundImage: 'background_image' };

export function removeBackgroundRoute(router: Router, services: Services, guards: Middleware[]): void {
  router.post('/images/remove-background', ...guards, async (ctx) => {
    const form = await readImageForm(ctx, services, REMOVE_BACKGROUND_FIELDS);
    const { fields } = form;
    const output = outputField(form);
    const format = fields.format === undefined ? 'png' : parseEnumField('format', REMOVE_BACKGROUND_FORMATS, fields.format);
    const trim = fields.trim === undefined ? false : parseBooleanField('trim', fields.trim);
    const trimMargin = fields.trim_margin === undefined ? undefined : parseTrimMarginField(fields.trim_margin);
    if (trimMargin && !trim) throw new MatteError('invalid_field', 'trim_margin needs trim=true (the margin is around the trimmed subject)', 'trim_margin');
    const channels = fields.channels === undefined ? 'rgba' : parseEnumField('channels', CHANNELS, fields.channels);
    const refine = fields.refine === undefined ? true : parseBooleanField('refine', fields.refine);
    const staging = {
      size: fields.size === undefined ? undefined : parseSizeField(fields.size),
      roi: fields.roi === undefined ? undefined : parseRoiField(fields.roi),
      semitransparency: fields.semitransparency === undefined ? undefined : parseBooleanField('semitransparency', fields.semitransparency),
      place: fields.place === undefined ? undefined : parsePlaceField(fields.place),
      shadow: fields.shadow === undefined ? undefined : parseShadowField(fields.shadow),
      background: fields.background === undefined ? undefined : parseJsonField('background', JSON.stringify(fields.background), operationValueSchemas.background, 'a CSS colour'),
    };
    const hasBackgroundImage = form.backgroundImage !== undefined || fields.background_image !== undefined;
    if (staging.background !== undefined && hasBackgroundImage) throw new MatteError('invalid_field', 'background_image cannot be given with background: one or the other', 'background_image');
    if (channels === 'alpha') {
      for (const [field, given] of [['shadow', staging.shadow], ['background', staging.background], ['background_image', hasBackgroundImage || undefined]] as const) {
        if (given !== undefined) throw new MatteError('invalid_field', `${field} cannot be used with channels=alpha (the matte alone)`, field);
      }
    }
    const model = await services.model.check(fields.model === undefined ? undefined : parseModelField(fields.model));
    const input = await inputBytes(form, services);
    const backgroundImage = await backgroundImageBytes(form, services, input);
    ctx.state.model = model; // the metrics label of the job (server/metrics.ts)
    await services.model.ensure();
    const result = await runJob(ctx, services, (control) =>
      removeBackground(input, {
        format,
        trim,
        trimMargin: trimMargin && ('pixels' in trimMargin ? trimMargin.pixels : `${trimMargin.percent}%`),
        channels,
        refine,
        model,
        ...staging,
        backgroundImage,
        limits: services.limits,
        matteCache: services.matteCache,
        handOver: true,
        ...control,
      }).catch((err) => {
        // An option's name in a job's error is the form's field.
        const error = backgroundImageField(err);
        if (error instanceof MatteError && error.path && FIELD_OF_OPTION[error.path]) throw new MatteError(error.code, error.message, FIELD_OF_OPTION[error.path]);
        throw error;
      }),
    );
    await sendResult(ctx, services, result, output);
  });
}
