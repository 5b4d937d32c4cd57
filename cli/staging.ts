// The staged cut-out's flags of `matte remove-background` (docs/api.md, "Extensions: staged
// cut-outs"): parsed by the same functions as the server's form fields, their errors named after
// the flag.
import { MatteError, operationValueSchemas, parseJsonField, parsePlaceField, parseRoiField, parseShadowField, parseSizeField, type RemoveBackgroundOptions } from '../lib/index.js';
import { CliError } from './errors.js';
import { readInput } from './files.js';

export interface StagingFlags {
  size?: string;
  roi?: string;
  semitransparency?: boolean;
  shadow?: string | boolean;
  place?: string;
  background?: string;
  backgroundImage?: string;
}

/** A parser's 400 as the command's error: the flag's name, not the form field's. */
function flag<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof MatteError) throw new CliError(`--${name}: ${err.message.replace(/^\S+ /, '')}`, 'invalid_option', name);
    throw err;
  }
}

/** The options the flags give (the background image read from its file). */
export async function stagingOptions(flags: StagingFlags): Promise<Partial<RemoveBackgroundOptions>> {
  const options: Partial<RemoveBackgroundOptions> = {};
  if (flags.size !== undefined) options.size = flag('size', () => parseSizeField(flags.size!));
  if (flags.roi !== undefined) options.roi = flag('roi', () => parseRoiField(flags.roi!));
  if (flags.semitransparency === false) options.semitransparency = false;
  if (flags.shadow !== undefined) options.shadow = flags.shadow === true ? true : flag('shadow', () => parseShadowField(String(flags.shadow)));
  if (flags.place !== undefined) options.place = flag('place', () => parsePlaceField(flags.place!));
  if (flags.background !== undefined) options.background = flag('background', () => parseJsonField('background', JSON.stringify(flags.background), operationValueSchemas.background, 'a CSS colour'));
  if (flags.backgroundImage !== undefined) {
    if (flags.background !== undefined) throw new CliError('--background and --background-image: give one of them', 'invalid_option', 'backgroundImage');
    options.backgroundImage = await readInput(flags.backgroundImage);
  }
  return options;
}
