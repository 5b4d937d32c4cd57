// `matte remove-background IN... -o OUT`: many images (a folder stands for the images in it,
// `s3://bucket/prefix/` for every object under it) through the library, several jobs at once (each
// with its share of the threads, as in the server: lib configure()), as a batch (batch.ts): results
// named after their inputs, sharded with --shard, resumable in a bucket. An existing local result is
// not overwritten without --force; a failure names the input and the reason and the others go on.
import type { Command } from 'commander';
import { CHANNELS, loadModel, parseTrimMargin, removeBackground, removeBackgroundOptionsSchema, REMOVE_BACKGROUND_FORMATS, type RemoveBackgroundFormat, type RemoveBackgroundOptions } from '../lib/index.js';
import { batchOptions, runBatch, type BatchFlags } from './batch.js';
import { digestOf, versionOf, type ModelVersion } from './batch-outputs.js';
import { CliError } from './errors.js';
import { parseFormat } from './files.js';
import { stagingOptions, type StagingFlags } from './staging.js';

interface Flags extends BatchFlags, StagingFlags {
  trim?: boolean;
  trimMargin?: string;
  channels?: string;
  format: string;
  model?: string;
}

// The `model` option of removeBackground comes with the per-request model choice in lib (branch
// `quality`); until the library's options accept it, the model loaded up front (loadModel makes it
// the current one) is the one every job uses.
const optionsTakeModel = 'model' in (removeBackgroundOptionsSchema.shape as Record<string, unknown>);

export function removeBackgroundCommand(program: Command): void {
  const command = program
    .command('remove-background')
    .alias('rmbg')
    .description('remove the background of one or more images, in parallel (POST /images/remove-background)')
    .argument('<inputs...>', 'image files, folders (their image files) or s3://bucket/prefix/ (every object under it)')
    .requiredOption('-o, --output <dir>', 'folder for the results (created when missing) or s3://bucket/prefix/; each is named after its input')
    .option('--trim', 'crop each result to the bounding box of its visible pixels')
    .option('--trim-margin <margin>', 'with --trim, a margin around the subject: pixels (30, at most 500) or a share of its box (10%, at most 50%)')
    .option('--channels <channels>', `${CHANNELS.join(' (default) or ')}: the cut-out, or the matte alone as a greyscale image`, 'rgba')
    .option('-f, --format <format>', `${REMOVE_BACKGROUND_FORMATS.join(', ')} (auto: png where a result has transparency, else jpeg)`, 'png')
    .option('-m, --model <name>', 'the model (see `matte models list`; default: MATTE_MODEL, else the registry default)')
    .option('--size <size>', 'a cap on each result: preview (0.25 MP), medium (1.5), hd (4), full, auto, or megapixels (2.5); the input is decoded no larger than needed')
    .option('--roi <x1,y1,x2,y2>', "only this region can be foreground: pixels of the input (120 or 120px) or percentages (25%)")
    .option('--no-semitransparency', 'a hard matte: alpha 0 or 255, its edge antialiased by one pixel')
    .option('--shadow [type]', 'a shadow under the subject: drop (default), contact, or the shadow operation\'s JSON')
    .option('--place <json>', 'the subject scaled and placed, e.g. \'{"scale":80,"aspectRatio":"1:1"}\'')
    .option('--background <colour>', 'a CSS colour under the cut-out')
    .option('--background-image <file>', 'an image under the cut-out, covered and centred');
  batchOptions(command)
    .addHelpText(
      'after',
      `
The staging (--size, --shadow, --place, --background, --background-image) is applied in this order
after the cut-out: size, trim, shadow, place, background (docs/api.md, "Extensions: staged cut-outs").
Exit code 0 when every input was done, 1 when any failed (each failure names the input and the
reason; in a bucket they are also written to <output>.matte/failures-<I>-of-<N>.jsonl) or the
batch could not start, 3 when the bucket store failed (run it again: finished work is skipped).

Examples:
  matte remove-background photos/*.jpg -o cutouts
  matte remove-background photos -o cutouts --format webp --trim --model isnet
  matte remove-background shop/*.jpg -o masks --channels alpha
  matte remove-background shop/*.jpg -o products --trim --trim-margin 10%
  matte remove-background shop/*.jpg -o square --shadow --place '{"scale":80,"aspectRatio":"1:1"}' --background '#fff' --format jpeg
  matte remove-background photos -o previews --size preview --background-image studio.jpg --format auto
  matte remove-background s3://shop/raw/ -o s3://shop/cutouts/ --shard 3/16`,
    )
    .action(async (inputs: string[], flags: Flags) => {
      const format = (flags.format.trim().toLowerCase() === 'auto' ? 'auto' : parseFormat(flags.format, REMOVE_BACKGROUND_FORMATS)) as RemoveBackgroundFormat;
      const channels = flags.channels!.trim().toLowerCase();
      if (!(CHANNELS as readonly string[]).includes(channels)) throw new CliError(`--channels must be one of ${CHANNELS.join(', ')}`, 'invalid_option', 'channels');
      if (flags.trimMargin !== undefined) {
        const margin = parseTrimMargin(flags.trimMargin);
        if (typeof margin === 'string') throw new CliError(`--trim-margin ${margin}`, 'invalid_option', 'trimMargin');
        if (!flags.trim) throw new CliError('--trim-margin needs --trim (the margin is around the trimmed subject)', 'invalid_option', 'trimMargin');
      }
      const { backgroundImage, ...staging } = await stagingOptions(flags);
      const options: RemoveBackgroundOptions = { format, trim: Boolean(flags.trim), trimMargin: flags.trimMargin, channels: channels as RemoveBackgroundOptions['channels'], ...staging, ...(optionsTakeModel && flags.model ? ({ model: flags.model } as object) : {}) };
      let model: ModelVersion | undefined;
      await runBatch(inputs, flags, {
        // The model by its name and its file's sha256, the background image by its bytes: a result
        // made with another model file or another backdrop is made again.
        get settings() {
          return { command: 'remove-background', ...options, backgroundImage: backgroundImage && digestOf(backgroundImage), model };
        },
        format: () => format,
        // The input is handed over (read in place); handOver would cover the background image
        // too, which every job shares, so with one both are copied.
        run: (data) => removeBackground(data, backgroundImage ? { ...options, backgroundImage } : { ...options, handOver: true }),
        // Loaded once up front: a missing or unknown model is one error, not one per input.
        prepare: async () => {
          model = versionOf(await loadModel(flags.model));
        },
      });
    });
}
