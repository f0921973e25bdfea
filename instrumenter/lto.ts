// Link-time optimisation and the runtime copy inside `-c` objects.
//
// A `-c` object compiled through cc-memwrap carries a weak copy of the
// runtime, joined to it by a relocatable link. With -flto the object holds
// compiler IR (gcc: `.gnu.lto_*` sections; clang: LLVM bitcode), and a join
// with a native runtime object either drops the IR (gcc compiles it to
// machine code: "incremental linking of LTO and non-LTO objects … will bypass
// whole program optimization") or fails (clang's bitcode is not an object
// file to ld). So under -flto the weak runtime is IR too, and the join keeps
// IR: `gcc -flto -r -flinker-output=rel` merges gcc IR into one LTO object,
// `llvm-link` merges bitcode (and clang re-adds the ThinLTO summary that
// llvm-link drops).
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';

/** The link-time optimisation a command asks for, or null when none. */
export interface Lto {
  /** The flag in force, as the user spelled it (`-flto`, `-flto=auto`, `-flto=thin`, …). */
  flag: string;
  /** clang's ThinLTO: objects carry a summary, and the runtime must be thin too (llvm-link refuses to join a
   *  thin module with a full one: "linking module flags 'EnableSplitLTOUnit': IDs have conflicting values"). */
  thin: boolean;
  /** -ffat-lto-objects in force: the object also holds machine code, for links without the LTO plugin. */
  fat: boolean;
}

/** The last -flto[=…] or -fno-lto of the command decides, as for the compiler (-flto-partition= and friends
 *  tune LTO but do not switch it on). */
export function ltoOf(args: readonly string[]): Lto | null {
  let flag: string | null = null;
  let fat = false;
  for (const arg of args) {
    if (arg === '-flto' || arg.startsWith('-flto=')) flag = arg;
    else if (arg === '-fno-lto') flag = null;
    else if (arg === '-ffat-lto-objects') fat = true;
    else if (arg === '-fno-fat-lto-objects') fat = false;
  }
  return flag === null ? null : { flag, thin: flag === '-flto=thin', fat };
}

/** Whether a file is LLVM bitcode (raw, or in the wrapper some targets use), as clang writes under -flto. */
export function isBitcode(file: string): boolean {
  const head = Buffer.alloc(4);
  const fd = openSync(file, 'r');
  try {
    if (readSync(fd, head, 0, 4, 0) < 4) return false;
  } finally {
    closeSync(fd);
  }
  const word = head.readUInt32LE(0);
  return word === 0xdec04342 /* 'BC' 0xC0DE */ || word === 0x0b17c0de /* bitcode wrapper */;
}

/** The C text that makes every symbol the runtime defines weak: the LTO runtime is IR, which `objcopy
 *  --weaken` cannot reach, so its sources are compiled with these pragmas force-included instead. `names` are
 *  the global symbols the native runtime object defines. */
export function weakPragmas(names: readonly string[]): string {
  return names.map((name) => `#pragma weak ${name}\n`).join('');
}

/** A tool of the compiler's own toolchain (nm, llvm-link): what `-print-prog-name` names, else the bare name. */
export function toolFor(compiler: string, tool: string): string {
  const result = spawnSync(compiler, [`-print-prog-name=${tool}`], { encoding: 'utf8' });
  const name = result.status === 0 ? result.stdout.trim() : '';
  return name || tool;
}
