// Reading a build's output for the units cc-memwrap built uninstrumented:
// both of the driver's fallback messages, as the driver itself words them,
// among the compiler's and make's own lines.
import { describe, expect, it } from 'vitest';
import { doesNotCompileMessage, notInstrumentedMessage, uninstrumentedUnits } from '../../instrumenter/fallback-messages.js';

describe('uninstrumentedUnits', () => {
  it('finds both messages, with the path as the compiler command named it', () => {
    const output = [
      'make[1]: Entering directory \'/tmp/p/build\'',
      '[ 20%] Building C object CMakeFiles/cjson.dir/cJSON.c.o',
      notInstrumentedMessage('/tmp/p/src/lparser.c', 'tree-sitter could not parse line 12: unexpected token'),
      "/tmp/p/src/lparser.c:12:3: warning: unused variable 'x' [-Wunused-variable]",
      doesNotCompileMessage('../lib/zutil.c'),
      'gcc -O2 -c lapi.c',
    ].join('\n');
    expect(uninstrumentedUnits(output)).toEqual([
      { unit: '/tmp/p/src/lparser.c', reason: 'not-instrumented' },
      { unit: '../lib/zutil.c', reason: 'does-not-compile' },
    ]);
  });

  it('names a unit once per reason, though a build compiles it twice', () => {
    const output = `${doesNotCompileMessage('adler32.c')}\n${doesNotCompileMessage('adler32.c')}\r\n${notInstrumentedMessage('adler32.c', 'boom')}\n`;
    expect(uninstrumentedUnits(output)).toEqual([
      { unit: 'adler32.c', reason: 'does-not-compile' },
      { unit: 'adler32.c', reason: 'not-instrumented' },
    ]);
  });

  it('keeps spaces in a path, and stops the first message\'s path at its error text', () => {
    const output = `${notInstrumentedMessage('my dir/a b.c', 'edit at 3: overlaps: 4')}\n${doesNotCompileMessage('my dir/c d.c')}`;
    expect(uninstrumentedUnits(output).map((f) => f.unit)).toEqual(['my dir/a b.c', 'my dir/c d.c']);
  });

  it('ignores the words elsewhere than at a line\'s start, strict-mode errors and other warnings', () => {
    const output = [
      'x.c:3:1: note: cc-memwrap: could not instrument y.c: quoted in a string',
      'cc-memwrap: error: the instrumented z.c does not compile, although the original does (--mw-strict)',
      'cc-memwrap: warning: frame sizes unreadable; report --stack will not know w.c',
      '',
    ].join('\n');
    expect(uninstrumentedUnits(output)).toEqual([]);
  });
});
