// A firmware's trace in the viewer, in real Chromium: lesson 8 built for the STM32F405 board and run under QEMU. The
// RAM map panel draws the RAM the linker script lays out with the budgets it sets, shows the numbers `cc-memwrap
// report` prints (one computation: analysis/ram-map.ts), and its first crossing opens its event and its line; the
// budgets panel and the chart check the same budgets.
import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { skipAllWhen } from '../support/machine.js';
import { must, run, samplesDir, scratch, wrapper } from '../support/programs.js';
import { CROSS, noFirmware, reportJson } from '../support/firmware.js';
import { openPanel, panelText, SCREENSHOTS, selectedEvent, shot, viewerOn, type Viewer } from './browser.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const BOARD = ['-mcpu=cortex-m4', '-mthumb', '--specs=nano.specs', '--specs=rdimon.specs', '-Lsamples/board', '-T', 'stm32f405.ld', '-O0', '-g'];
const QEMU = ['-M', 'netduinoplus2', '-nographic', '-monitor', 'none', '-serial', 'none', '-semihosting-config', 'enable=on,target=native', '-kernel', 'sensor.elf'];

describe("a firmware's RAM map in the viewer (lesson 8 on the STM32F405 board)", () => {
  skipAllWhen(noFirmware);
  let viewer: Viewer;
  let page: Page;
  let report: Json;

  beforeAll(async () => {
    if (noFirmware !== null) return;
    const dir = scratch('gui-ram-map');
    cpSync(samplesDir, path.join(dir, 'samples'), { recursive: true });
    mkdirSync(path.join(dir, 'run'));
    must(wrapper, ['--mw-strict', CROSS, ...BOARD, 'samples/board/startup.c', 'samples/sensor-log.c', '-o', 'run/sensor.elf'], { cwd: dir });
    run('qemu-system-arm', QEMU, { cwd: path.join(dir, 'run') });
    const trace = path.join(dir, 'run', 'sensor.mwtrace');
    report = reportJson(trace);
    viewer = await viewerOn(trace);
    page = viewer.page;
  });

  afterAll(() => viewer?.close());

  test('the RAM map tab shows the report\'s numbers, the regions to scale and the linker script\'s budgets as marks', async () => {
    const m = report.ramMap;
    await openPanel(page, 'ram');
    const text = await panelText(page);
    expect(text).toContain(`margin at the peaks ${m.margin.toLocaleString('en-US')} B`);
    expect(text).toContain(`stack peak${m.stack.peak.toLocaleString('en-US')} B1.0 KiB budget (_Min_Stack_Size)`);
    expect(text).toContain(`program ${m.static.byOwner.program} B`);
    expect(text).toContain(`cc-memwrap ${m.static.byOwner.runtime.toLocaleString('en-US')} B`);
    // Static data by owner, the heap region and its peak, the stack's reservation and its peak; the two budgets.
    expect(await page.locator('[data-role=ram-bar] .ram-seg.static').count()).toBe(3);
    expect(await page.locator('[data-role=ram-bar] .ram-seg.region').count()).toBe(2);
    expect(await page.locator('[data-role=ram-bar] .ram-seg.used').count()).toBe(2);
    const marks = await page.locator('[data-role=ram-budget]').evaluateAll((els) => els.map((e) => (e as HTMLElement).title));
    expect(marks.sort()).toEqual([`heap budget: ${report.budgets.checks[0].limitBytes.toLocaleString('en-US')} B`, 'stack budget: 1,024 B']);
    // The stack's peak is drawn past its reservation, from the top of RAM down.
    const widths = await page.locator('[data-role=ram-bar] .ram-seg.used, [data-role=ram-bar] .ram-seg.region').evaluateAll((els) => els.map((e) => (e as HTMLElement).getBoundingClientRect().width));
    expect(widths[3]!).toBeGreaterThan(widths[2]!);
    await shot(page, 'ram-map');
    // The panel whole, for docs/target.md: its content shown over the page, unclipped by the panels' row.
    await page.evaluate(() => {
      const whole = document.querySelector('.ram-map')!.cloneNode(true) as HTMLElement;
      whole.id = 'ram-map-whole';
      for (const [k, v] of Object.entries({ position: 'absolute', left: '0', top: '0', width: '1100px', background: '#fff', zIndex: '100', border: '1px solid #dee2e6' })) whole.style.setProperty(k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), v);
      document.body.append(whole);
    });
    await page.locator('#ram-map-whole').screenshot({ path: path.join(SCREENSHOTS, 'ram-map-panel.png') });
    await page.evaluate(() => document.getElementById('ram-map-whole')!.remove());
  });

  test('the first crossing names term at line 48, and opens its event and its line', async () => {
    const c = report.ramMap.firstCrossed;
    expect(c).toMatchObject({ kind: 'stack', event: 133, function: 'term', line: 48 });
    expect(await page.locator('[data-role=ram-crossed]').textContent()).toBe('First crossed: the stack budget of 1,024 B at event 133 (1,056 B), by term (line 48)');
    await page.locator('[data-role=ram-crossed-line]').click();
    await expect.poll(() => selectedEvent(page)).toBe(133);
    await page.waitForSelector('.code .ln.selected');
    expect(await page.locator('.code .ln.selected').getAttribute('data-line')).toBe('48');
    expect(await page.locator('#source-head').textContent()).toContain('sensor-log.c');
  });

  test('a gauge row opens its peak; the budgets panel checks the script\'s budgets', async () => {
    await openPanel(page, 'ram');
    await page.locator('.ram-map table.rows tbody tr').nth(2).click();
    await expect.poll(() => selectedEvent(page)).toBe(report.peakStack.event);
    await openPanel(page, 'budgets');
    const text = await panelText(page);
    expect(text).toMatch(/stack ≤ 1\.0 KiB.*exceeded/);
    expect(viewer.errors).toEqual([]);
  });
});
