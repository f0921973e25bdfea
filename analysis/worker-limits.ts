// What every worker thread of the readers is started with (`new Worker(file, { resourceLimits: WORKER_LIMITS })`): a
// small code range. V8 reserves 512 MiB of address space for each isolate's JIT code unless told otherwise, so a
// `report --html` that runs three workers beside the main thread reserved 2.3 GB and died ("Fatal process OOM …
// CodeRange") under `ulimit -v 2000000`; the readers' workers run one loop each and need a few MiB of code.
// A plain constant: no Node import, so analysis/ stays usable in the browser.

/** resourceLimits for a reader's worker thread: 32 MiB of code range (not 512). */
export const WORKER_LIMITS = { codeRangeSizeMb: 32 } as const;
