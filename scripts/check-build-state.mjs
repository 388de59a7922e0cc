// Checks that a checkout whose dist/ was deleted builds again: `tsc -b` skips
// a project whose build state (.tsbuildinfo) says it is current, so that state
// must live inside the output it describes. Run after `npm run build` (npm test
// does). Each package's dist is moved aside, `tsc -b --dry` must want to build
// every project, and the smallest project (testing's ESM build) is really
// rebuilt; every dist is put back as it was.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const problems = [];
const log = (line) => process.stderr.write(`[check:build] ${line}\n`);
const packages = readdirSync(join(root, 'packages')).filter((name) => existsSync(join(root, 'packages', name, 'tsconfig.json')));

// 1. Every project's build state sits inside its own outDir.
const projects = [];
for (const name of packages) {
  for (const file of ['tsconfig.json', 'tsconfig.cjs.json']) {
    const path = join(root, 'packages', name, file);
    if (!existsSync(path)) continue;
    const { compilerOptions = {} } = JSON.parse(readFileSync(path, 'utf8'));
    const dir = join(root, 'packages', name);
    const outDir = compilerOptions.outDir && resolve(dir, compilerOptions.outDir);
    const buildInfo = compilerOptions.tsBuildInfoFile && resolve(dir, compilerOptions.tsBuildInfoFile);
    const shown = relative(root, path);
    projects.push(shown);
    if (!outDir || !buildInfo) problems.push(`${shown}: names no outDir or tsBuildInfoFile`);
    else if (relative(outDir, buildInfo).startsWith('..'))
      problems.push(`${shown}: tsBuildInfoFile ${compilerOptions.tsBuildInfoFile} is outside outDir ${compilerOptions.outDir}`);
  }
}

// 2. With every dist gone, a build wants every project; after a real rebuild the output is back.
const aside = (name) => join(root, 'packages', name, `dist.check-build-${process.pid}`);
const moved = [];
let missing = false;
try {
  for (const name of packages) {
    const dist = join(root, 'packages', name, 'dist');
    if (!existsSync(dist)) {
      problems.push(`packages/${name}/dist is missing: run npm run build first`);
      missing = true;
      continue;
    }
    renameSync(dist, aside(name));
    moved.push(name);
  }
  if (!missing) {
    const dry = execFileSync(process.execPath, [tsc, '-b', join(root, 'tsconfig.json'), '--dry'], { cwd: root, encoding: 'utf8' });
    for (const project of projects) {
      if (!dry.includes(`would build project '${join(root, project)}'`)) problems.push(`${project}: with dist/ deleted, tsc -b still thinks it is up to date`);
    }
    execFileSync(process.execPath, [tsc, '-b', 'packages/testing/tsconfig.json'], { cwd: root, encoding: 'utf8' });
    if (!existsSync(join(root, 'packages/testing/dist/esm/index.js'))) problems.push('packages/testing/dist/esm/index.js: not rebuilt after dist/ was deleted');
  }
} finally {
  for (const name of moved) {
    rmSync(join(root, 'packages', name, 'dist'), { recursive: true, force: true });
    renameSync(aside(name), join(root, 'packages', name, 'dist'));
  }
}

if (problems.length > 0) {
  for (const problem of problems) log(problem);
  process.exit(1);
}
log(`${projects.length} projects: build state inside dist/, and a deleted dist/ is rebuilt`);
