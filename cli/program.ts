// The `matte` program: commander parses the arguments, one file registers each subcommand.
// Every failure ends as one line on stderr and exit code 1 (usage errors from commander included:
// its message is folded onto one line); --help and --version exit 0.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { report } from './errors.js';
import { editCommand } from './edit.js';
import { modelsCommand } from './models.js';
import { removeBackgroundCommand } from './remove-background.js';
import { serveCommand } from './serve.js';
import { signCommand } from './sign.js';

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('matte')
    .description('Image editing and AI background removal: one native libvips + ONNX Runtime call per image.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand(false)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      // commander puts a suggestion ("(Did you mean --op?)") on a second line: keep one line.
      outputError: (message, write) => write(`matte: ${message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ').trim()}\n`),
    });
  // Subcommands are made with program.command(), so they inherit exitOverride and the output settings.
  editCommand(program);
  removeBackgroundCommand(program);
  serveCommand(program);
  modelsCommand(program);
  signCommand(program);
  return program;
}

/** Runs the program on argv (process.argv form) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    // Help, version and commander's own usage errors were already written by commander.
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 1;
    return report(err, json);
  }
}
