// Lints the OpenAPI document with Redocly's recommended rules and fails on any problem,
// warnings included (`redocly lint` itself fails only on errors). Usage:
//   node lint-openapi.mjs <openapi.json>
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const doc = process.argv[2];
if (!doc) {
  console.error('usage: node lint-openapi.mjs <openapi.json>');
  process.exit(2);
}
const redocly = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules', '.bin', 'redocly');
let out;
try {
  out = execFileSync(redocly, ['lint', '--extends=recommended', '--format=json', doc],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
} catch (err) {
  out = err.stdout; // errors exit non-zero; the report is on stdout all the same
  if (!out) {
    console.error(err.stderr || String(err));
    process.exit(1);
  }
}
const report = JSON.parse(out);
for (const p of report.problems) {
  const where = p.location.map((l) => l.pointer).join(', ');
  console.error(`${p.severity} ${p.ruleId}: ${p.message} (${where})`);
}
const { errors, warnings } = report.totals;
if (errors + warnings > 0) {
  console.error(`redocly lint (recommended): ${errors} errors, ${warnings} warnings in ${doc}; none are allowed`);
  process.exit(1);
}
console.log(`redocly lint (recommended): ${doc} has no errors and no warnings`);
