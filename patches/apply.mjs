// Applies every patches/<package>+<version>.patch to node_modules/<package> (npm's postinstall):
// npm has no patching of its own. The files are unified diffs in patch-package's layout
// (paths `a/node_modules/<package>/…`), so `git apply` or patch-package would apply them as well.
// A hunk is found by its text, not its line number; a hunk already applied is skipped, so running
// this twice changes nothing. A package at another version, or a hunk whose text is not found,
// stops the install: a dependency upgrade must bring its patch along or drop it.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dir = path.join(root, 'patches');

function fail(message) {
  console.error(`patches: ${message}`);
  process.exit(1);
}

/** `a/node_modules/x/y.js` → hunks of { before, after } texts (context and removed / context and added lines). */
function parse(text) {
  const files = [];
  let file = null;
  let hunk = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('--- ')) continue;
    if (line.startsWith('+++ ')) {
      file = { path: line.slice(4).replace(/^b\//, ''), hunks: [] };
      files.push(file);
      hunk = null;
    } else if (line.startsWith('@@')) {
      hunk = { before: [], after: [] };
      file?.hunks.push(hunk);
    } else if (hunk && (line.startsWith(' ') || line === '')) {
      hunk.before.push(line.slice(1));
      hunk.after.push(line.slice(1));
    } else if (hunk && line.startsWith('-')) hunk.before.push(line.slice(1));
    else if (hunk && line.startsWith('+')) hunk.after.push(line.slice(1));
    else hunk = null; // `diff --git`, `index …`, `\ No newline at end of file`
  }
  return files;
}

for (const name of readdirSync(dir).filter((f) => f.endsWith('.patch'))) {
  const match = /^(.+)\+([^+]+)\.patch$/.exec(name);
  if (!match) fail(`${name}: expected <package>+<version>.patch`);
  const [, pkg, version] = match;
  const pkgName = pkg.replace('+', '/'); // @scope+name
  let installed;
  try {
    installed = JSON.parse(readFileSync(path.join(root, 'node_modules', pkgName, 'package.json'), 'utf8')).version;
  } catch {
    fail(`${name}: ${pkgName} is not installed`);
  }
  if (installed !== version) fail(`${name}: ${pkgName} is ${installed}; update or drop the patch`);
  let applied = 0;
  for (const file of parse(readFileSync(path.join(dir, name), 'utf8'))) {
    const target = path.join(root, file.path);
    let text = readFileSync(target, 'utf8');
    for (const hunk of file.hunks) {
      // The patch file's last newline reads as an empty context line: shared empty tail lines go.
      while (hunk.before.at(-1) === '' && hunk.after.at(-1) === '') {
        hunk.before.pop();
        hunk.after.pop();
      }
      const before = hunk.before.join('\n');
      const after = hunk.after.join('\n');
      const at = text.indexOf(before);
      const once = at >= 0 && text.indexOf(before, at + 1) < 0;
      // A hunk that only adds at its edge still contains its `before` text once applied.
      if (!(once && !after.includes(before)) && text.includes(after)) continue;
      if (!once) fail(`${name}: a hunk of ${file.path} does not match`);
      text = text.slice(0, at) + after + text.slice(at + before.length);
      applied++;
    }
    writeFileSync(target, text);
  }
  if (applied) console.log(`patches: ${name} applied (${applied} hunks)`);
}
