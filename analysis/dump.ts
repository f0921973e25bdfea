// One line of text per trace record (and per chunk and UNIT site), in file order, then the decoder's problems: `cc-memwrap dump` and golden tests.
import { EndHow, ExtKind, Kind, extKindName, kindName, siteKindName, CallPathFlag } from './trace/format.js';
import { readHeader } from './trace/header.js';
import { memorySource, type ByteSource } from './trace/byte-source.js';
import { walkRecords, type ChunkInfo, type RecordVisitor, type TraceRecord } from './trace/records.js';
import { streamSource } from './trace/resolve-stream.js';
import { hex } from './trace/run-facts.js';
import { ProblemLog } from './problems.js';
import { signalName } from './signals.js';

const at = (offset: number): string => `0x${offset.toString(16).padStart(6, '0')}`;
const q = (s: string): string => JSON.stringify(s);

function describeFn(r: TraceRecord): string {
  return r.interposed ? `interposed fn=${siteKindName(r.fn)}` : `site=${r.site}`;
}

/** The fields of one record after its kind name ('' if none). */
export function describeRecord(r: TraceRecord): string {
  switch (r.kind) {
    case Kind.THREAD_BEGIN:
      return `seq=${hex(r.seq)} tid=${r.osTid}`;
    case Kind.UNIT:
      return `base=${r.unit!.base} sites=${r.unit!.kind.length} strings=${r.unit!.strings.length}`;
    case Kind.STATIC:
      return `site=${r.site} addr=${hex(r.address)} size=${r.size}`;
    case Kind.ENTER:
      return `site=${r.site} depth=${r.depth}`;
    case Kind.EXIT:
      return r.ignored ? `delta=${r.site}` : `site=${r.site} entry=${r.entrySite}`;
    case Kind.UNWIND:
      return `count=${r.count}`;
    case Kind.ALLOC:
      return `seq=${hex(r.seq)} ${describeFn(r)} size=${r.size} addr=${hex(r.address)} usable=${r.usable}`;
    case Kind.FREE:
      return `seq=${hex(r.seq)} ${describeFn(r)} ` + (r.untracked ? `untracked addr=${hex(r.address)}` : `block=${hex(r.block)}`);
    case Kind.REALLOC: {
      const old = r.block === 0 ? 'null' : hex(r.block);
      const result = r.noBlock ? 'no-block' : `addr=${hex(r.address)} usable=${r.usable}`;
      return `seq=${hex(r.seq)} ${describeFn(r)} old=${old} size=${r.size} ${result}${r.failed ? ' failed' : ''}`;
    }
    case Kind.LINKED:
      return `count=${r.count} blocks=${r.ids.map(hex).join(',')}${r.partial ? ' partial' : ''}`;
    case Kind.TIME:
      return `+${r.delta}ns t=${r.time}ns`;
    case Kind.END:
      if (r.how === EndHow.EXIT) return `exit status=${r.status}`;
      if (r.how === EndHow.SIGNAL) return `signal ${r.status}${signalName(r.status) ? ` (${signalName(r.status)})` : ''}`;
      return `how=${r.how} status=${r.status}`;
    case Kind.THREAD_END:
      return '';
    case Kind.PROGRAM:
      return `path=${q(r.path)} cwd=${q(r.cwd)}`;
    case Kind.LOST:
      return `count=${r.count}`;
    case Kind.EXT: {
      const head = `${extKindName(r.subkind)} length=${r.payloadLength}`;
      if (r.subkind === ExtKind.RAW_MARK) return `${head} segment=${r.rawSegment} word=${r.rawWord}`;
      if (r.ignored) return head;
      if (r.subkind === ExtKind.LIBRARY) return `${head} library=${r.library} path=${q(r.path)}`;
      if (r.subkind === ExtKind.CALLER) return `${head} library=${r.library}`;
      if (r.subkind === ExtKind.BRANCH) return `${head} site=${r.site} ${r.taken === 1 ? 'taken' : 'not-taken'}`;
      if (r.subkind === ExtKind.RANK) return `${head} rank=${r.rank} from=${q(r.path)}`;
      if (r.subkind === ExtKind.CALL_PATH) {
        const flags = [(r.pathFlags & CallPathFlag.REACHED) !== 0 ? ' reached' : '', (r.pathFlags & CallPathFlag.CUT) !== 0 ? ' cut' : ''].join('');
        return `${head}${flags} path=${r.pathLibs.map((lib, i) => `${lib}+0x${r.pathOffsets[i]!.toString(16)}`).join(',')}`;
      }
      if (r.subkind !== ExtKind.LEAKS) return head;
      const cls = ['direct', 'indirect', 'reachable'];
      const list = r.ids.map((id, i) => `${hex(id)}:${cls[r.classes[i]!] ?? `class${r.classes[i]}`}`).join(',');
      return `${head} count=${r.count}${r.count > 0 ? ` blocks=${list}` : ''}${r.partial ? ' partial' : ''}`;
    }
    default:
      return '';
  }
}

/**
 * Emits the dump line by line; `onProgress` is told the fraction done (two reads of the file: checking it, then its
 * lines). Throws TraceRefusedError if the file is not a readable trace.
 */
export function dumpTrace(input: Uint8Array | ByteSource, emit: (line: string) => void, options: { onProgress?: (fraction: number, phase: string) => void } = {}): void {
  const progress = options.onProgress;
  const bytes = input instanceof Uint8Array ? memorySource(input) : input;
  const h = readHeader(bytes);
  emit(
    `MWTRACE ${h.major}.${h.minor} ${h.littleEndian ? 'little' : 'big'}-endian pointer=${h.pointerSize} ` +
      `complete=${h.complete ? 'yes' : 'no'} pid=${h.pid} ppid=${h.ppid} start=${h.startTimeNs}ns header=${h.headerSize} size=${h.fileSize}`,
  );
  // The reader's problems include the walk's own, plus checks of blocks, sites and the run's end: a streaming pass with
  // no fold finds them all, holding the live blocks only.
  const problems = streamSource(bytes, { onProgress: progress && ((f) => progress(f / 2, 'checking the records')) }).run(() => []).problems;
  let records = 0;
  let chunks = 0;
  const threads = new Set<number>();
  const visitor: RecordVisitor = {
    chunk(c: ChunkInfo) {
      chunks++;
      threads.add(c.thread);
      const cut = c.readable !== c.used ? ` readable=${c.readable}` : '';
      emit(`chunk ${at(c.offset)} thread=${c.thread} capacity=${c.capacity} used=${c.used}${cut}`);
    },
    rawSegment(c) {
      emit(`raw segment ${at(c.offset)} thread=${c.thread} capacity=${c.capacity} number=${c.segment}`);
    },
    rawTail(thread, segment, word) {
      emit(`raw tail thread=${thread} from segment=${segment} word=${word} (records the encoder thread had not written)`);
    },
    record(r: TraceRecord) {
      records++;
      const fields = describeRecord(r);
      const ignored = r.ignored && !(r.kind === Kind.EXT && r.subkind === ExtKind.RAW_MARK) ? ' (ignored)' : '';
      emit(`  ${at(r.offset)} t${r.thread} ${kindName(r.kind)}${fields === '' ? '' : ' ' + fields}${ignored}`);
      if (r.kind === Kind.UNIT) {
        const u = r.unit!;
        const s = (i: number): string => (u.strings[i] === undefined ? `?${i}` : q(u.strings[i]!));
        for (let i = 0; i < u.kind.length; i++) {
          emit(
            `      site ${u.base + i} ${siteKindName(u.kind[i]!)} file=${s(u.file[i]!)} line=${u.line[i]} ` +
              `func=${s(u.func[i]!)} name=${s(u.name[i]!)}`,
          );
        }
      }
    },
  };
  walkRecords(bytes, h, visitor, new ProblemLog(), { onProgress: progress && ((done, total) => progress(0.5 + done / total / 2, 'writing the records')) });
  emit(`end: ${records} records in ${chunks} chunks, ${threads.size} threads`);
  const list = problems;
  if (list.length === 0) emit('problems: none');
  else {
    emit(`problems: ${list.length}`);
    for (const p of list) emit(`  ${p.severity}: ${p.message}`);
  }
}

/** The whole dump as one string (each line ends with a newline). */
export function dumpTraceText(bytes: Uint8Array | ByteSource): string {
  const lines: string[] = [];
  dumpTrace(bytes, (l) => lines.push(l));
  return lines.join('\n') + '\n';
}
