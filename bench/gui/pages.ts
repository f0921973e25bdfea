// `node dist/bench/gui/pages.js lanes A B…` or `… compare A B`: serves the lanes page of `cc-memwrap view A B…` or
// the compare page of `cc-memwrap view A --compare B` in this process, with the sessions `view` opens for them
// (cli/view.ts: the first lane's and each lane's index with times and the panel's report deferred; both compared
// runs' report deferred), opens it in Chromium with
// --enable-precise-memory-info, samples the page's performance.memory.usedJSHeapSize every 250 ms until the page is
// ready (every lane drawn; the charts and the differences shown), and prints the time to ready, the host's CPU time
// (process.cpuUsage: every thread of this process, the index builds' and the differences' worker threads among them)
// and resident size, the page's JS heap at its peak and when ready, and how many requests asked for a trace whole
// (/api/trace). The page's progress is printed as it changes. MEMWRAP_VIEW_INDEX applies as for `view`.
import { chromium } from 'playwright-core';
import os from 'node:os';
import path from 'node:path';
import { RecentList } from '../../host/recent.js';
import { startServer, type RunningServer } from '../../host/server.js';
import { TraceFile } from '../../host/trace-file.js';
import { useIndex } from '../../host/index-cache.js';
import { TraceSession } from '../../host/trace-session.js';
import { packageRoot } from '../../package-root.js';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--enable-precise-memory-info'];

async function main(): Promise<number> {
  const [what, ...files] = process.argv.slice(2);
  if ((what !== 'lanes' && what !== 'compare') || files.length < 2 || (what === 'compare' && files.length !== 2)) {
    process.stderr.write('usage: node dist/bench/gui/pages.js lanes A B… | compare A B\n');
    return 2;
  }
  const rendererDir = path.join(packageRoot, 'dist', 'gui', 'renderer');
  const recent = new RecentList(path.join(os.tmpdir(), 'cc-memwrap-pages-bench-recent.json'));
  let running: RunningServer;
  if (what === 'lanes') {
    const lanes = files.map((f) => path.resolve(f));
    const first = await TraceFile.read(lanes[0]!);
    const session = TraceSession.of(first, { index: useIndex(first.size), deferReport: true, timedSummaries: true });
    running = await startServer({ rendererDir, session, recent, lanes });
  } else {
    const session = await TraceSession.open(files[0]!, { deferReport: true });
    const compare = await TraceSession.open(files[1]!, { deferReport: true });
    running = await startServer({ rendererDir, session, recent, compare });
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    const requests: string[] = [];
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    const handle = what === 'lanes' ? 'ccMemwrapLanes' : 'ccMemwrapCompare';
    let hostPeak = 0;
    const sampler = setInterval(() => (hostPeak = Math.max(hostPeak, process.memoryUsage().rss)), 250);
    const t0 = Date.now();
    const cpu0 = process.cpuUsage();
    await page.goto(`${running.url}${what}.html`);
    await page.evaluate(() => {
      const w = window as unknown as { heapPeak: number };
      const used = (): number => (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize;
      w.heapPeak = used();
      setInterval(() => (w.heapPeak = Math.max(w.heapPeak, used())), 250);
    });
    let shown = '';
    for (;;) {
      const s = await page.evaluate((h) => {
        const x = (window as unknown as Record<string, { ready: boolean; error: string | null } | undefined>)[h];
        return { ready: x?.ready === true, error: x?.error ?? null, label: document.getElementById('progress')?.hidden ? '' : (document.getElementById('progress-label')?.textContent ?? '') };
      }, handle);
      if (s.error !== null) throw new Error(s.error);
      if (s.ready) break;
      // Each new phase once, not each new percentage.
      const phase = s.label.replace(/[\d.]+%?/g, '#');
      if (phase !== shown && s.label !== '') process.stdout.write(`${((Date.now() - t0) / 1000).toFixed(1)} s  ${s.label}\n`);
      shown = phase;
      await new Promise((r) => setTimeout(r, 500));
    }
    const ready = (Date.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    clearInterval(sampler);
    const heap = await page.evaluate(() => ({
      peak: (window as unknown as { heapPeak: number }).heapPeak,
      now: (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize,
    }));
    const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`;
    process.stdout.write(
      `${what}: ready after ${ready.toFixed(1)} s; host CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, resident at most ${mib(hostPeak)}; ` +
        `page JS heap ${mib(Math.max(heap.peak, heap.now))} at most, ${mib(heap.now)} when ready; requests for a trace whole: ${requests.filter((r) => r === '/api/trace').length}\n`,
    );
    return 0;
  } finally {
    await browser.close();
    await running.close();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  },
);
