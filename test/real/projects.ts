// The real-world projects: where each one's source comes from, how its own
// build system is driven (the same commands plainly and with cc-memwrap as
// the compiler), which of its own tests run, and the workload that is timed
// and compared with Valgrind's heap totals.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sqliteAmalgamation, sqliteWorkload, SQLITE_NPM_PACKAGE } from '../../bench/sources.js';
import { debianSource, type DebianSource } from './debian-sources.js';

/** A command of a project: run in the build tree, with optional input. */
export interface Step {
  command: string;
  args: string[];
  /** Relative to the build tree. */
  cwd?: string;
  input?: string;
}

export interface Built {
  /** The project's tree (sources, objects, programs). */
  dir: string;
  /** The compiler command given to the build system: `gcc` or `cc-memwrap gcc`. */
  cc: string;
}

export interface Project {
  name: string;
  /** Where the source comes from, as the table says it. */
  origin: string;
  /** The unpacked source tree, fetched and cached once. */
  fetch(log: (line: string) => void): DebianSource;
  /** Build steps in a fresh copy of the tree, with `CC` as given. */
  build(built: Built): Step[];
  /** The project's own tests: each must print the same and exit the same. */
  tests(built: Built): Step[];
  /** The workload timed and compared with Valgrind's totals. */
  workload(built: Built): Step;
  /**
   * Sources known to be built uninstrumented (the driver's fallback), each
   * with why; the build must name exactly these. `unit` is the path as the
   * build's compiler command names it, or a tail of it (`src/lparser.c`).
   * None of the projects has one today.
   */
  expectedFallbacks?: ExpectedFallback[];
}

export interface ExpectedFallback {
  unit: string;
  reason: string;
}

const sh = (script: string): Step => ({ command: 'sh', args: ['-c', script] });

/** cJSON with CMake, its C89 -pedantic -Werror warning set on (cJSON's own
 *  ENABLE_CUSTOM_COMPILER_FLAGS, two dozen warnings), the launcher set. */
const cjson: Project = {
  name: 'cJSON',
  origin: 'Debian source package cjson',
  fetch: (log) => debianSource('cjson', {}, log),
  build: ({ cc }) => {
    const launcher = cc === 'gcc' ? [] : [`-DCMAKE_C_COMPILER_LAUNCHER=${cc.split(' ')[0]}`];
    return [
      { command: 'cmake', args: ['-S', '.', '-B', 'build', '-DCMAKE_C_COMPILER=gcc', '-DENABLE_CJSON_UTILS=ON', '-DBUILD_SHARED_LIBS=OFF', ...launcher] },
      { command: 'make', args: ['-C', 'build', '-j2'] },
    ];
  },
  // The unit tests run with cwd tests/ (they read inputs/ from there), as ctest runs them.
  tests: () =>
    ['cjson_add', 'compare_tests', 'misc_tests', 'misc_utils_tests', 'old_utils_tests', 'parse_array', 'parse_examples', 'parse_hex4', 'parse_number', 'parse_object', 'parse_string', 'parse_value', 'parse_with_opts', 'print_array', 'print_number', 'print_object', 'print_string', 'print_value', 'readme_examples', 'minify_tests', 'json_patch_tests'].map(
      (t) => ({ command: `build/tests/${t}`, args: [], cwd: 'tests' }),
    ),
  workload: () => ({ command: 'build/cJSON_test', args: [] }),
};

/** Lua 5.4 with its own makefile. Debian's first patch swaps that makefile
 *  for a libtool one that also builds a C++ copy of the library, so the
 *  upstream tree is used as released. */
const lua: Project = {
  name: 'Lua 5.4',
  origin: 'Debian source package lua5.4',
  fetch: (log) => debianSource('lua5.4', { skipPatches: true }, log),
  build: ({ cc }) => [{ command: 'make', args: ['-j2', 'linux', `CC=${cc} -std=gnu99`] }],
  tests: ({ dir }) => {
    writeFileSync(path.join(dir, 'checks.lua'), LUA_CHECKS);
    return [
      { command: 'src/lua', args: ['checks.lua'] },
      // luac compiles the script and lists its bytecode; lua runs the compiled chunk.
      sh('src/luac -o checks.luac checks.lua && src/luac -l -l checks.luac | sed "s/0x[0-9a-f]*//g" | md5sum && src/lua checks.luac'),
    ];
  },
  workload: ({ dir }) => {
    writeFileSync(path.join(dir, 'workload.lua'), LUA_WORKLOAD);
    return { command: 'src/lua', args: ['workload.lua'] };
  },
};

/** zlib with its configure script (which probes $CC) and make; its own
 *  `make test` runs example and minigzip, static and shared. */
const zlib: Project = {
  name: 'zlib',
  origin: 'Debian source package zlib',
  fetch: (log) => debianSource('zlib', {}, log),
  build: ({ cc }) => [sh(`CC="${cc}" ./configure && make -j2`)],
  tests: () => [{ command: 'make', args: ['test'] }],
  workload: ({ dir }) => {
    // Compresses a few hundred KB of its own sources, to stdout.
    writeFileSync(path.join(dir, 'input.txt'), ['ChangeLog', 'deflate.c', 'inflate.c', 'zlib.h', 'FAQ'].map((f) => readFileSync(path.join(dir, f), 'latin1')).join('').repeat(3), 'latin1');
    return { command: './minigzip', args: ['-9', '-c', 'input.txt'] };
  },
};

/** SQLite from the npm package's autoconf tarball, its own configure
 *  (autosetup) and make; the shell answers our SQL script. */
const sqlite: Project = {
  name: 'SQLite',
  origin: `npm package ${SQLITE_NPM_PACKAGE}`,
  fetch: (log) => ({ dir: sqliteAmalgamation(log), how: 'its deps/sqlite-autoconf-*.tar.gz' }),
  build: ({ cc }) => [sh(`./configure CC="${cc}" --disable-shared --disable-threadsafe --disable-load-extension --disable-readline >configure.out && make sqlite3`)],
  tests: () => [{ command: './sqlite3', args: [':memory:'], input: sqliteWorkload(500) }],
  workload: () => ({ command: './sqlite3', args: [':memory:'], input: sqliteWorkload(2000) }),
};

/** jsmn: a header-only tokenizer (functions in the header, `return` hidden
 *  in the tests' check macros); its makefile builds and runs four test
 *  configurations; jsondump reallocates its token array as it grows. */
const jsmn: Project = {
  name: 'jsmn',
  origin: 'Debian source package jsmn',
  fetch: (log) => debianSource('jsmn', {}, log),
  build: ({ cc }) => [{ command: 'make', args: ['test_default', 'test_strict', 'test_links', 'test_strict_links', 'jsondump', `CC=${cc}`, 'CFLAGS=-O2 -Wall'] }],
  tests: () => ['test_default', 'test_strict', 'test_links', 'test_strict_links'].map((t) => ({ command: `test/${t}`, args: [] })),
  workload: () => ({ command: './jsondump', args: [], input: jsonDocument(400) }),
};

/** tcc: configure and make, one GNU C unit per part (statement expressions,
 *  computed goto, typeof); the built compiler then builds its own runtime
 *  library. Its test: compiling and running its big test program. */
const tcc: Project = {
  name: 'tcc',
  origin: 'Debian source package tcc',
  fetch: (log) => debianSource('tcc', {}, log),
  build: ({ cc }) => [sh(`./configure --cc="${cc}" >configure.out && make tcc libtcc1.a`)],
  tests: () => [
    { command: './tcc', args: ['-B.', '-I.', '-Itests', '-run', 'tests/tcctest.c'] },
    // tests2: a hundred small programs compiled and run by tcc, output compared with .expect files.
    { command: 'make', args: ['-C', 'tests/tests2'] },
  ],
  // Compiling only: run under Valgrind, tcctest's long double results
  // differ (Valgrind computes x87 long doubles in 64 bits), which would make
  // the reference run print other numbers than the plain one.
  workload: () => ({ command: './tcc', args: ['-B.', '-I.', '-Itests', '-c', 'tests/tcctest.c', '-o', 'tcctest.o'] }),
};

export const projects: Project[] = [cjson, lua, zlib, sqlite, jsmn, tcc];

/** Copies a fetched tree to where one build of it happens. */
export function copyTree(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
}

/** A JSON document with nested objects and arrays, `n` records long. */
function jsonDocument(n: number): string {
  const records = Array.from({ length: n }, (_, i) => ({ id: i, name: `record-${i}`, tags: ['a', 'b', String(i % 7)], nested: { x: i * 1.5, ok: i % 2 === 0, none: null } }));
  return JSON.stringify({ records, count: n });
}

const LUA_CHECKS = `
-- Closures, coroutines, metatables, string patterns, integer and float math, errors.
local function counter() local n = 0; return function() n = n + 1; return n end end
local c = counter(); c(); c(); print("counter", c())
local co = coroutine.wrap(function(a) local b = coroutine.yield(a * 2); return a + b end)
print("coroutine", co(5), co(7))
local mt = { __add = function(x, y) return setmetatable({ v = x.v + y.v }, getmetatable(x)) end, __tostring = function(x) return "V(" .. x.v .. ")" end }
print("metatable", tostring(setmetatable({ v = 2 }, mt) + setmetatable({ v = 40 }, mt)))
print("gsub", ("hello world from lua"):gsub("(%w+)", "<%1>"))
print("math", 7 // 2, 7 / 2, math.maxinteger, 2^53, string.format("%.3f", math.pi))
print("pcall", pcall(error, { code = 42 }) , select(2, pcall(error, "boom", 0)))
local t = setmetatable({}, { __mode = "k" }); t[{}] = 1; collectgarbage(); local n = 0; for _ in pairs(t) do n = n + 1 end
print("weak", n)
print("utf8", utf8.len("häßlich"), utf8.char(72, 228, 223))
`;

const LUA_WORKLOAD = `
-- Strings, tables and garbage: Lua's allocator is one realloc-based function.
local t = {}
for i = 1, 200000 do t[i] = ("item-%d"):format(i) end
local parts = {}
for i = 1, #t, 7 do parts[#parts + 1] = t[i]:upper() end
local s = table.concat(parts, ",")
local counts = {}
for w in s:gmatch("ITEM%-(%d)") do counts[w] = (counts[w] or 0) + 1 end
local keys = {}
for k in pairs(counts) do keys[#keys + 1] = k end
table.sort(keys)
for _, k in ipairs(keys) do print(k, counts[k]) end
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print(#s, fib(24))
`;
