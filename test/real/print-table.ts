// Global setup of the real-world suite: names this run's folder of rows, and
// at the end prints its table (the one docs/tests.md shows).
import { rmSync } from 'node:fs';
import { projects } from './projects.js';
import { formatTable, readRows, startRun } from './table.js';

export default function setup(): () => void {
  const folder = startRun();
  return () => {
    const rows = readRows();
    rmSync(folder, { recursive: true, force: true });
    if (rows.length === 0) return;
    process.stdout.write(`\nReal-world suite (${new Date().toISOString().slice(0, 10)}):\n\n${formatTable(rows, projects.map((p) => p.name))}\n\n`);
  };
}
