import { existsSync, readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';

/**
 * Every ```ts block of the READMEs (the repository's and each package's) and
 * of the guides (docs/, but the generated API site) type-checks as its own ES module against the sources, under the tests'
 * compiler options: strict, so `createClient({ redis: process.env.REDIS_URL })`
 * (a `string | undefined`) is an error here as it is in an application.
 *
 * A README shows fragments, so two things are not errors: a name the block
 * uses without declaring it (TS2304, and TS18004 for a shorthand property)
 * stands for the reader's own code, and `…` for code left out. What the
 * block imports is checked as an application would: a block that uses an
 * rlock export should import it, or its calls are checked against nothing.
 */
const ROOT = new URL('../../../../', import.meta.url).pathname;
const GUIDES = readdirSync(`${ROOT}docs`, { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.md') && !path.startsWith('api/'))
  .map((path) => `docs/${path}`);
const READMES = ['README.md', ...readdirSync(`${ROOT}packages`).map((pkg) => `packages/${pkg}/README.md`), ...GUIDES].filter((path) =>
  existsSync(`${ROOT}${path}`),
);

/** A name the block does not declare (the reader's own code): TS2304, and TS18004 for `{ signal }`. */
const PLACEHOLDER_CODES = new Set([2304, 18004]);

interface Snippet {
  /** The README, from the repository's root. */
  readonly path: string;
  /** The line of the block's opening fence. */
  readonly line: number;
  readonly fileName: string;
  readonly code: string;
}

function snippetsOf(path: string): Snippet[] {
  const text = readFileSync(`${ROOT}${path}`, 'utf8');
  const snippets: Snippet[] = [];
  for (const match of text.matchAll(/^```ts\n([\s\S]*?)^```/gm)) {
    const line = text.slice(0, match.index).split('\n').length;
    snippets.push({
      path,
      line,
      // Beside the repository's node_modules, so `ioredis` and `node:*` resolve as in an application.
      fileName: `${ROOT}readme-snippets/${path.replace(/[/.]/g, '_')}_${line}.mts`,
      // `…` is elided code; as a comment it is valid wherever code may stand.
      code: `${(match[1] as string).replace(/…/g, '/*…*/')}\nexport {};\n`,
    });
  }
  return snippets;
}

/** The tests' compiler options (strict; `@org/*` mapped to the sources), as `npm run typecheck:tests` uses them. */
function compilerOptions(): ts.CompilerOptions {
  const configPath = `${ROOT}tsconfig.test.json`;
  const { config } = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path)) as { config: unknown };
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, configPath);
  // A callback handed to a placeholder has nothing to infer its parameters from.
  return { ...options, noImplicitAny: false, noEmit: true };
}

describe('README snippets', () => {
  it('type-check under strict against the sources (undeclared names stand for the reader’s code)', () => {
    const snippets = READMES.flatMap(snippetsOf);
    expect(snippets.length).toBeGreaterThan(0);
    const byFileName = new Map(snippets.map((snippet) => [snippet.fileName, snippet]));
    const options = compilerOptions();
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    host.getSourceFile = (fileName, languageVersion, ...rest) => {
      const snippet = byFileName.get(fileName);
      return snippet ? ts.createSourceFile(fileName, snippet.code, languageVersion, true) : getSourceFile(fileName, languageVersion, ...rest);
    };
    host.fileExists = (fileName) => byFileName.has(fileName) || fileExists(fileName);
    const program = ts.createProgram([...byFileName.keys()], options, host);

    const problems: string[] = [];
    for (const snippet of snippets) {
      const source = program.getSourceFile(snippet.fileName) as ts.SourceFile;
      const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
      for (const diagnostic of diagnostics) {
        if (PLACEHOLDER_CODES.has(diagnostic.code)) continue;
        const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
        problems.push(`${snippet.path}:${snippet.line + 1 + line} TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('are all ```ts, so none escapes the check (a JavaScript block is checked as TypeScript just as well)', () => {
    const unchecked = READMES.flatMap((path) =>
      [...readFileSync(`${ROOT}${path}`, 'utf8').matchAll(/^```(js|javascript|mjs|typescript)$/gm)].map((match) => `${path}: a \`\`\`${match[1]} block`),
    );
    expect(unchecked).toEqual([]);
  });
});
