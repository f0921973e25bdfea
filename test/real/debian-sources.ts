// Debian source packages fetched with `apt-get source` through a private apt
// configuration under .cache/apt/: its own sources.list of deb-src lines,
// derived from the archives this machine already uses, and its own lists and
// cache. /etc/apt is only read, never written. Downloads are kept in
// .cache/sources/debian/ between runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../package-root.js';

const aptDir = path.join(packageRoot, '.cache', 'apt');
const sourcesDir = path.join(packageRoot, '.cache', 'sources', 'debian');

/** One archive the machine is configured with: where, which suites and
 *  components, and the keyring that signs it. */
export interface Archive {
  uri: string;
  suites: string[];
  components: string[];
  signedBy: string | null;
}

/** Reads the deb822 stanzas of a `.sources` file: fields by lower-case name,
 *  continuation lines (an inline Signed-By key) joined with newlines. */
export function parseDeb822(text: string): Array<Map<string, string>> {
  const stanzas: Array<Map<string, string>> = [];
  let current = new Map<string, string>();
  let last: string | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    if (line.trim() === '') {
      if (current.size > 0) stanzas.push(current);
      current = new Map();
      last = null;
    } else if (/^\s/.test(line) && last !== null) {
      current.set(last, `${current.get(last)}\n${line.trim() === '.' ? '' : line.trim()}`);
    } else {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      last = line.slice(0, colon).trim().toLowerCase();
      current.set(last, line.slice(colon + 1).trim());
    }
  }
  if (current.size > 0) stanzas.push(current);
  return stanzas;
}

function archivesFromDeb822(text: string): Archive[] {
  const words = (s: string | undefined) => (s ?? '').split(/\s+/).filter(Boolean);
  return parseDeb822(text)
    .filter((s) => s.get('enabled') !== 'no' && words(s.get('types')).some((t) => t === 'deb' || t === 'deb-src'))
    .flatMap((s) =>
      words(s.get('uris')).map((uri) => ({ uri, suites: words(s.get('suites')), components: words(s.get('components')), signedBy: s.get('signed-by') ?? null })),
    );
}

/** One-line sources.list entries: `deb [signed-by=…] URI SUITE COMPONENT…`. */
export function archivesFromList(text: string): Archive[] {
  const archives: Archive[] = [];
  for (const raw of text.split('\n')) {
    const m = /^\s*deb(?:-src)?\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$/.exec(raw);
    if (!m) continue;
    const signed = /(?:^|\s)signed-by=(\S+)/.exec(m[1] ?? '');
    archives.push({ uri: m[2]!, suites: [m[3]!], components: m[4]!.split(/\s+/).filter(Boolean), signedBy: signed ? signed[1]! : null });
  }
  return archives;
}

/** The archives of /etc/apt/sources.list and /etc/apt/sources.list.d/, the
 *  same ones (and only those) that `apt-get install` uses here. */
export function configuredArchives(etc = '/etc/apt'): Archive[] {
  const archives: Archive[] = [];
  const list = path.join(etc, 'sources.list');
  if (existsSync(list)) archives.push(...archivesFromList(readFileSync(list, 'utf8')));
  const parts = path.join(etc, 'sources.list.d');
  for (const file of existsSync(parts) ? readdirSync(parts).sort() : []) {
    const text = readFileSync(path.join(parts, file), 'utf8');
    if (file.endsWith('.sources')) archives.push(...archivesFromDeb822(text));
    else if (file.endsWith('.list')) archives.push(...archivesFromList(text));
  }
  return archives;
}

/** deb-src lines for the private sources.list; an inline key is written to
 *  a keyring file of its own, since one-line entries only take paths. */
export function debSrcLines(archives: Archive[], keyDir: string): string[] {
  return archives.flatMap((archive, i) => {
    let key = archive.signedBy;
    if (key !== null && key.includes('\n')) {
      const file = path.join(keyDir, `inline-key-${i}.asc`);
      writeFileSync(file, `${key}\n`);
      key = file;
    }
    const option = key !== null ? `[signed-by=${key}] ` : '';
    return archive.suites.map((suite) => `deb-src ${option}${archive.uri} ${suite} ${archive.components.join(' ')}`.trim());
  });
}

/** `apt-get` with the private configuration. */
function aptGet(args: string[], cwd: string): { status: number | null; output: string } {
  const options = [
    `Dir::Etc::SourceList=${path.join(aptDir, 'sources.list')}`,
    // No parts directory: only the private list counts.
    'Dir::Etc::SourceParts=/dev/null',
    `Dir::State::Lists=${path.join(aptDir, 'lists')}`,
    `Dir::Cache=${path.join(aptDir, 'cache')}`,
    // Root may hand downloads to the _apt user, who cannot write the cache here.
    ...(process.getuid?.() === 0 ? ['APT::Sandbox::User=root'] : []),
  ].flatMap((o) => ['-o', o]);
  const result = spawnSync('apt-get', [...options, ...args], { cwd, encoding: 'utf8', timeout: 600_000 });
  if (result.error) throw new Error(`apt-get could not run: ${result.error.message} (test/real/run.sh installs it)`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Writes the private configuration and reads the source indexes once. */
function prepareApt(log: (line: string) => void): void {
  const lists = path.join(aptDir, 'lists');
  if (existsSync(lists) && readdirSync(lists).some((f) => f.includes('Sources'))) return;
  const archives = configuredArchives();
  if (archives.length === 0) throw new Error('no Debian archive is configured in /etc/apt/sources.list or /etc/apt/sources.list.d/*.sources: nowhere to fetch source packages from');
  for (const dir of ['lists/partial', 'cache/archives/partial', 'keys']) mkdirSync(path.join(aptDir, dir), { recursive: true });
  const lines = debSrcLines(archives, path.join(aptDir, 'keys'));
  writeFileSync(path.join(aptDir, 'sources.list'), `${lines.join('\n')}\n`);
  log(`reading the source indexes of ${archives.map((a) => a.uri).join(', ')}`);
  const update = aptGet(['update'], aptDir);
  if (update.status !== 0 || !readdirSync(lists).some((f) => f.includes('Sources'))) {
    throw new Error(`apt-get update with the deb-src lines of ${path.join(aptDir, 'sources.list')} failed, so the Debian archive is unreachable or has no sources:\n${update.output}`);
  }
}

export interface DebianSource {
  /** The unpacked tree. */
  dir: string;
  /** How it was unpacked, for the suite's table. */
  how: string;
}

/**
 * The unpacked source of a Debian package, fetched once. `skipPatches` keeps
 * the upstream tree as released, for packages whose Debian patches replace
 * the build system under test. When the archive serves the upstream tarball
 * but not Debian's packaging part (some mirrors lack it), the upstream
 * tarball alone is unpacked and `how` says so.
 */
export function debianSource(pkg: string, options: { skipPatches?: boolean } = {}, log: (line: string) => void = () => {}): DebianSource {
  const done = path.join(sourcesDir, `${pkg}${options.skipPatches ? '.upstream' : ''}`);
  const marker = path.join(done, '.unpacked-by');
  if (existsSync(marker)) return { dir: done, how: readFileSync(marker, 'utf8').trim() };
  prepareApt(log);
  const downloads = path.join(sourcesDir, 'downloads', pkg);
  mkdirSync(downloads, { recursive: true });
  log(`apt-get source --download-only ${pkg}`);
  const fetched = aptGet(['source', '--download-only', pkg], downloads);
  const work = `${done}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  const how = fetched.status === 0 ? unpackDsc(downloads, work, options.skipPatches === true) : unpackUpstreamOnly(pkg, downloads, work, fetched.output);
  writeFileSync(path.join(work, '.unpacked-by'), `${how}\n`);
  rmSync(done, { recursive: true, force: true });
  renameSync(work, done);
  return { dir: done, how };
}

function unpackDsc(downloads: string, into: string, skipPatches: boolean): string {
  const dsc = readdirSync(downloads).find((f) => f.endsWith('.dsc'));
  if (!dsc) throw new Error(`apt-get source left no .dsc in ${downloads}`);
  const args = ['-x', ...(skipPatches ? ['--skip-patches'] : []), dsc, into];
  const result = spawnSync('dpkg-source', args, { cwd: downloads, encoding: 'utf8' });
  if (result.error) throw new Error(`dpkg-source could not run: ${result.error.message} (it is in dpkg-dev, which test/real/run.sh installs)`);
  if (result.status !== 0) throw new Error(`dpkg-source ${args.join(' ')} failed:\n${result.stderr}`);
  return skipPatches ? `${dsc} (dpkg-source, upstream tree without Debian's patches)` : `${dsc} (dpkg-source)`;
}

function unpackUpstreamOnly(pkg: string, downloads: string, into: string, aptOutput: string): string {
  const orig = readdirSync(downloads).find((f) => /\.orig\.tar\.(gz|xz|bz2)$/.test(f));
  if (!orig) throw new Error(`apt-get source ${pkg} failed and left no upstream tarball:\n${aptOutput}`);
  const missing = /Failed to fetch (\S+)\s+(.*)/.exec(aptOutput);
  mkdirSync(into, { recursive: true });
  const result = spawnSync('tar', ['xf', path.join(downloads, orig), '-C', into, '--strip-components=1'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tar xf ${orig} failed:\n${result.stderr}`);
  // apt's reason without the address it tried ("404  Not Found [IP: …]").
  const reason = missing ? `${path.basename(missing[1]!)}: ${missing[2]!.replace(/\s*\[IP:[^\]]*\]/, '').replace(/\s+/g, ' ').trim()}` : "Debian's part";
  return `${orig} (upstream tarball only; the archive did not serve ${reason})`;
}
