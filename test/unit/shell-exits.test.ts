// R16: the stack scripts run under `set -e`, so a `[ test ] && command` that ends a case branch or a script is that
// branch's exit status: when the test is false the script fails with no message. That is how `stack.sh up` failed
// every fresh-clone run once Jaeger was optional (R18). Every such line is an `if … then … fi`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const scripts = new URL('../../scripts/', import.meta.url).pathname;
const files = readdirSync(scripts, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.sh'))
  .map((entry) => join(entry.parentPath, entry.name));

/** Lines `[ … ] && …` (or `[[ … ]] &&`) whose next non-blank line ends the branch, function or script. */
export function trailingTests(text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    if (!/^\s*\[\[?\s.*\]\]?\s*&&/.test(line) || /;;\s*$/.test(line)) return;
    const next = lines.slice(i + 1).find((l) => l.trim() !== '');
    if (next === undefined || /^\s*(;;|\}|esac)/.test(next)) found.push(line.trim());
  });
  return found;
}

describe('shell scripts under set -e (R16)', () => {
  it('finds the scripts', () => expect(files.length).toBeGreaterThanOrEqual(5));

  it('recognises the failing shape and leaves the others', () => {
    expect(trailingTests('  up)\n    start\n    [ "$X" = 1 ] && start_jaeger\n    ;;\n')).toHaveLength(1);
    expect(trailingTests('f() {\n  [ -n "$A" ] && echo a\n}\n')).toHaveLength(1);
    expect(trailingTests('[ -n "$A" ] && echo a\necho b\n')).toEqual([]);
    expect(trailingTests('    if [ "$X" = 1 ]; then start_jaeger; fi\n    ;;\n')).toEqual([]);
  });

  it('no case branch, function or script ends on a `[ test ] && command`', () => {
    for (const file of files) expect({ file, lines: trailingTests(readFileSync(file, 'utf8')) }).toEqual({ file, lines: [] });
  });
});
