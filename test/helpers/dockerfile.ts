// Reads the Dockerfile the way the image build does (stages, COPY/RUN/ENV/WORKDIR/USER/ENTRYPOINT/CMD), and builds
// a stage's file tree in a directory without a container engine: test/unit/dockerfile.test.ts holds the file to
// issue 22's rules, test/integration/image-tree.test.ts starts the processes from the final stage's tree.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

export interface Instruction {
  op: string;
  /** `--from=build`, `--mount=…`, `--chown=…`: the flags before the arguments. */
  flags: Record<string, string>;
  /** The arguments after the flags: words, or the items of a JSON array (ENTRYPOINT ["node"]). */
  args: string[];
  /** The arguments as written, flags removed (a RUN's shell command). */
  text: string;
}

export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

export function parseDockerfile(source: string): Stage[] {
  const lines = source
    .replace(/[ \t]*\\\r?\n\s*/g, ' ') // line continuations
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = op.toUpperCase();
    const flags: Record<string, string> = {};
    let text = rest;
    for (let m = /^--([a-z-]+)=(\S+)\s*/.exec(text); m; m = /^--([a-z-]+)=(\S+)\s*/.exec(text)) {
      flags[m[1]!] = m[2]!;
      text = text.slice(m[0].length);
    }
    const args = text.startsWith('[') ? (JSON.parse(text) as string[]) : text.split(/\s+/).filter(Boolean);
    if (upper === 'FROM') {
      const as = args.findIndex((a) => a.toUpperCase() === 'AS');
      stages.push({ image: args[0]!, name: as >= 0 ? args[as + 1]! : null, instructions: [] });
      continue;
    }
    if (!stages.length) throw new Error(`${upper} before FROM`);
    stages.at(-1)!.instructions.push({ op: upper, flags, args, text });
  }
  return stages;
}

/** ENV K=V … of a stage, in order. */
export function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of stage.instructions.filter((x) => x.op === 'ENV'))
    for (const pair of i.args) {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new Error(`ENV ${i.text}: only the K=V form is read`);
      env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  return env;
}

export const lastOf = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).at(-1);

/** The stage's WORKDIR (the last one; the tree's root stands for it). */
export function workdirOf(stage: Stage): string {
  const workdir = lastOf(stage, 'WORKDIR')?.args[0];
  if (!workdir) throw new Error('a stage without WORKDIR');
  return workdir;
}

export interface BuildOptions {
  /** The build context (the repository). */
  context: string;
  /** Directory that stands for the stage's WORKDIR. */
  into: string;
  /** Trees of earlier stages, by stage name, each standing for that stage's WORKDIR. */
  stages?: Record<string, { dir: string; workdir: string }>;
  /**
   * How to carry out a RUN: by default it runs as written (`sh -c`) in the tree. A function may substitute a step
   * (the build stage's full `npm ci` can link the repository's identical node_modules instead of reinstalling it).
   */
  run?: (command: string, dir: string) => boolean;
}

/** Builds one stage's tree: COPY from the context or an earlier stage, RUN in the tree, in the file's order. */
export function buildStage(stage: Stage, options: BuildOptions): void {
  const workdir = workdirOf(stage);
  const inTree = (dest: string) => join(options.into, posix.relative(workdir, posix.resolve(workdir, dest)));
  mkdirSync(options.into, { recursive: true });
  for (const i of stage.instructions) {
    if (i.op === 'COPY') {
      const sources = i.args.slice(0, -1);
      const dest = i.args.at(-1)!;
      const from = i.flags.from;
      const base = from ? options.stages?.[from] : undefined;
      if (from && !base) throw new Error(`COPY --from=${from}: no tree for that stage`);
      for (const source of sources) {
        const path = base
          ? join(base.dir, posix.relative(base.workdir, posix.resolve(base.workdir, source)))
          : join(options.context, source);
        const target = dest.endsWith('/') || sources.length > 1 ? join(inTree(dest), posix.basename(source)) : inTree(dest);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(path, target, { recursive: statSync(path).isDirectory(), dereference: false });
      }
    } else if (i.op === 'RUN') {
      if (options.run?.(i.text, options.into)) continue;
      execFileSync('sh', ['-c', i.text], { cwd: options.into, stdio: 'pipe', env: process.env, timeout: 600_000 });
    } else if (!['ENV', 'WORKDIR', 'USER', 'EXPOSE', 'ENTRYPOINT', 'CMD', 'LABEL', 'ARG'].includes(i.op)) {
      throw new Error(`${i.op} is not read by test/helpers/dockerfile.ts`);
    }
  }
}

/** Links `target` to the repository's node_modules (the build stage's full `npm ci` of the same lock file). */
export function linkNodeModules(repo: string, dir: string): void {
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
}
