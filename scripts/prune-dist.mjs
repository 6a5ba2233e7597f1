// Run by each public package's `prepack` after `tsc -b`, in the package's folder: deletes dist/ files whose source
// in src/ is gone (tsc never removes the output of a deleted or renamed file, and `files: ["dist"]` would ship it).
// Only outputs without a source go; nothing is rebuilt. Prints what it removed.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const pkg = process.cwd();
const dist = join(pkg, 'dist');
const src = join(pkg, 'src');
const OUTPUT = /^(.*?)(\.d\.ts\.map|\.d\.ts|\.js\.map|\.js)$/;

function sourceExists(base) {
  return ['.ts', '.tsx', '.mts', '.d.ts', '.js'].some((ext) => existsSync(join(src, base + ext)));
}

function prune(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    const match = OUTPUT.exec(relative(dist, path));
    if (match && !sourceExists(match[1])) {
      rmSync(path);
      process.stdout.write(`prune-dist: removed ${relative(pkg, path)} (no source)\n`);
    }
  }
}

if (existsSync(dist)) prune(dist);
