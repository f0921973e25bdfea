// The private apt configuration takes its archives from the machine's own
// sources (deb822 and one-line), and only turns them into deb-src lines.
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredArchives, debSrcLines } from './debian-sources.js';

function etcWith(files: Record<string, string>): string {
  const etc = mkdtempSync(path.join(os.tmpdir(), 'apt-etc-'));
  mkdirSync(path.join(etc, 'sources.list.d'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(etc, name), text);
  return etc;
}

describe('the archives of the machine', () => {
  it('reads deb822 stanzas, skipping disabled ones and other files', () => {
    const etc = etcWith({
      'sources.list.d/debian.sources':
        'Types: deb\n# a comment\nURIs: http://archive.example/debian\nSuites: stable stable-updates\nComponents: main contrib\nSigned-By: /usr/share/keyrings/k.gpg\n\n' +
        'Types: deb\nURIs: http://off.example/debian\nSuites: stable\nComponents: main\nEnabled: no\n',
      'sources.list.d/other.sources.disabled': 'Types: deb\nURIs: http://never.example/\nSuites: x\nComponents: main\n',
    });
    expect(configuredArchives(etc)).toEqual([
      { uri: 'http://archive.example/debian', suites: ['stable', 'stable-updates'], components: ['main', 'contrib'], signedBy: '/usr/share/keyrings/k.gpg' },
    ]);
  });

  it('reads one-line entries with their signed-by option', () => {
    const etc = etcWith({ 'sources.list': '# deb http://commented.example/ x main\ndeb [arch=amd64 signed-by=/k.gpg] http://a.example/debian stable main\ndeb-src http://b.example/debian testing main non-free\n' });
    expect(configuredArchives(etc)).toEqual([
      { uri: 'http://a.example/debian', suites: ['stable'], components: ['main'], signedBy: '/k.gpg' },
      { uri: 'http://b.example/debian', suites: ['testing'], components: ['main', 'non-free'], signedBy: null },
    ]);
  });

  it('writes one deb-src line per suite, an inline key to a keyring file', () => {
    const keys = mkdtempSync(path.join(os.tmpdir(), 'apt-keys-'));
    const inline = '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nabc\n-----END PGP PUBLIC KEY BLOCK-----';
    const lines = debSrcLines(
      [
        { uri: 'http://a.example/debian', suites: ['stable', 'stable-updates'], components: ['main'], signedBy: '/k.gpg' },
        { uri: 'http://b.example/debian', suites: ['stable'], components: ['main'], signedBy: inline },
      ],
      keys,
    );
    expect(lines).toEqual([
      'deb-src [signed-by=/k.gpg] http://a.example/debian stable main',
      'deb-src [signed-by=/k.gpg] http://a.example/debian stable-updates main',
      `deb-src [signed-by=${path.join(keys, 'inline-key-1.asc')}] http://b.example/debian stable main`,
    ]);
    expect(readFileSync(path.join(keys, 'inline-key-1.asc'), 'utf8')).toBe(`${inline}\n`);
  });
});
