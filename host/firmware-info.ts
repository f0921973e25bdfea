// A firmware's memory for the report and the viewer: the traced program's ELF file (the PROGRAM record of a trace
// whose header has pid 0, written by a runtime with no operating system) read as analysis/firmware-image.ts reads it.
import type { FoldSource } from '../analysis/event-fold.js';
import { readFirmwareImage, type FirmwareImage } from '../analysis/firmware-image.js';
import type { RamMap } from '../analysis/ram-map.js';
import { computeReport, summaryRequest } from '../analysis/report.js';
import type { BudgetConfig } from './budget-config.js';
import type { ProgramFile } from './program-file.js';

export interface FirmwareInfo {
  program: string | null;
  image: FirmwareImage | null;
  /** Why there is no image (null when there is one). */
  missing: string | null;
}

/** The firmware image of `program` (absolute, or null when the trace names none), from its file read once. */
export function readFirmwareInfo(program: string | null, file: ProgramFile | null): FirmwareInfo {
  if (program === null || file === null) return { program, image: null, missing: 'the trace does not name its firmware' };
  if (file.bytes === null) return { program, image: null, missing: file.problem };
  try {
    const image = readFirmwareImage(file.bytes);
    return image === null ? { program, image, missing: `${program} is not a bare-metal ARM program` } : { program, image, missing: null };
  } catch (e) {
    return { program, image: null, missing: `${program}: ${(e as Error).message}` };
  }
}

/** Static objects a viewer's RAM map lists. */
const OBJECTS_SHOWN = 40;

/**
 * A firmware's RAM map for the viewer: the report's own computation (analysis/report.ts, one streamed pass of its
 * summary and budget folds) over `source`, so the page shows the numbers `cc-memwrap report` prints. Null without an
 * image.
 */
export function viewerRamMap(source: FoldSource, file: string, info: FirmwareInfo, budgets: BudgetConfig): RamMap | null {
  if (info.image === null) return null;
  const limits = budgets.budgets === null ? null : { limits: budgets.budgets, source: budgets.source };
  const result = computeReport(source, file, summaryRequest(OBJECTS_SHOWN), { budgets: limits, frameSizes: null, firmware: { program: info.program, image: info.image } });
  return result.ramMap ?? null;
}
