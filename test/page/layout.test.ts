// Both pages laid out (issue 70, items 5 and 6), in Debian's chromium at 390 and 1280 px, in
// English, Arabic and Japanese, checked by geometry rather than by eye: no word drawn across two
// lines (each word's Range over its glyphs; a narrow card's label, which is CSS content, against
// its longest word's own width), no text past its box, no two labels of a chart on top of each
// other, one number format per language across every figure shown, and on the monitor's page a
// legend naming each line of "Speed over time", a time axis and figures by name and unit. The main
// page after a light test of its own and as a shared copy of a fast result with a history behind
// it; the monitor's page over a history written into its database (runs of a speed test and of
// the families check, one failed, some breaching). Screenshots go to test-results/layout-*.png.
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/cli/monitor/store.js';
import { encodeResult, type SharedResult } from '../../src/common/speedtest/share.js';
import { catalogue } from '../support/catalogues.js';
import { startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';

const ready = requireCommands('both pages laid out in chromium', ['chromium'], 'chromium');

const LANGUAGES = ['en', 'ar', 'ja'] as const;
const WIDTHS = [390, 1280] as const;
const SHOTS = 'test-results';

const DAY = 86_400_000;
/** Midnight-aligned so a run's date is whole seconds, as the store keeps it. */
const base = Math.floor(Date.now() / 1000) * 1000;

/** A fast line's result, as a link shares it: rates past 10 Gbit/s and under 10, a small increase under load. */
const FAST: SharedResult = { at: base - 3600_000, mode: 'full', downloadBps: 10_406_000_000, uploadBps: 8_292_000_000, latencyMs: 1.5, jitterMs: 0.2, loadedDownMs: 2.1, loadedUpMs: 1.9, lossPercent: 0, rpm: 35_020 };
/** The page's history before it: the trend's axis runs past 10 000 Mbit/s, its ticks of four and five digits. */
const KEPT: SharedResult[] = [5, 4, 3, 2].map((d, i) => ({ at: base - d * DAY, mode: 'full', downloadBps: (8_000 + 900 * i) * 1e6, uploadBps: (6_500 + 700 * i) * 1e6, latencyMs: 1.2 + i / 10, loadedDownMs: 2 + i, loadedUpMs: 1.8, rpm: 21_000 + 4_000 * i }));

/**
 * What is wrong with the layout inside `roots`, each as a line naming it: a word drawn over two
 * lines (in Japanese, which breaks between any two characters, only a label's word or a Latin or
 * numeric run), text past the block that holds it, a box whose content is wider than it (but in a
 * box made to scroll sideways), a card's label narrower than its longest word, and two texts of a
 * chart overlapping or past the chart's edge. Machine text (code, links, left-to-right cells)
 * breaks where it must and is left out.
 */
function layoutFaults(page: Page, roots: string[], lang: string): Promise<string[]> {
  return page.evaluate(
    ({ roots, lang }) => {
      const out: string[] = [];
      const name = (el: Element) => `${el.tagName.toLowerCase()}${el.id === '' ? '' : `#${el.id}`}${typeof el.className === 'string' && el.className !== '' ? `.${el.className.split(' ').join('.')}` : ''}`;
      // Shown to the eye: laid out, and not clipped away for screen readers only (a card's table head, .visually-hidden).
      const clipped = (el: Element) => {
        for (let e: Element | null = el; e !== null; e = e.parentElement) if (getComputedStyle(e).clipPath !== 'none') return true;
        return false;
      };
      const shown = (el: Element) => {
        const box = el.getBoundingClientRect();
        return box.width > 1 && box.height > 1 && el.closest('[hidden]') === null && getComputedStyle(el).visibility !== 'hidden' && !clipped(el);
      };
      const machine = (el: Element) => el.closest('code, .link, svg, [dir="ltr"], select, option') !== null;
      const scrolls = (el: Element | null) => {
        for (let e = el; e !== null; e = e.parentElement) if (['auto', 'scroll'].includes(getComputedStyle(e).overflowX)) return true;
        return false;
      };
      const blockOf = (el: Element) => {
        let e: Element | null = el;
        while (e !== null && ['inline', 'contents'].includes(getComputedStyle(e).display)) e = e.parentElement;
        return e ?? el;
      };
      const LABELS = 'th, dt, h1, h2, h3, button, label, summary, legend, caption, .value, .key, .state, td';
      const lines = (rects: DOMRect[]) => {
        const tops: number[] = [];
        for (const r of rects) if (r.width > 0 && !tops.some((t) => Math.abs(t - r.top) < r.height / 2)) tops.push(r.top);
        return tops.length;
      };
      const words = (text: string, labelish: boolean): [number, number][] => {
        const found: [number, number][] = [];
        // Only a breaking space separates words; a no-break space holds a figure to its unit.
        if (lang !== 'ja') for (const m of text.matchAll(/[^ \t\n\r\u200b]+/g)) found.push([m.index, m.index + m[0].length]);
        else {
          for (const m of text.matchAll(/[0-9A-Za-z\u00a0.,%+/:-]*[0-9A-Za-z][0-9A-Za-z\u00a0.,%+/:-]*/g)) found.push([m.index, m.index + m[0].length]);
          if (labelish) for (const s of new Intl.Segmenter('ja', { granularity: 'word' }).segment(text)) if (s.isWordLike === true) found.push([s.index, s.index + s.segment.length]);
        }
        return found;
      };
      for (const root of roots.flatMap((s) => [...document.querySelectorAll(s)])) {
        if (!shown(root)) continue;
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode() as Text | null; node !== null; node = walker.nextNode() as Text | null) {
          const el = node.parentElement;
          if (el === null || !shown(el) || machine(el) || node.data.trim() === '') continue;
          for (const [from, to] of words(node.data, el.closest(LABELS) !== null)) {
            const range = document.createRange();
            range.setStart(node, from);
            range.setEnd(node, to);
            if (lines([...range.getClientRects()]) > 1) out.push(`"${node.data.slice(from, to)}" broken across lines in ${name(el)}`);
          }
          if (scrolls(el)) continue;
          const block = blockOf(el);
          const box = block.getBoundingClientRect();
          const range = document.createRange();
          range.selectNodeContents(node);
          for (const r of range.getClientRects()) {
            if (r.width > 0 && (r.right > box.right + 1 || r.left < box.left - 1)) {
              out.push(`"${node.data.trim().slice(0, 40)}" past the edge of ${name(block)} (${String(Math.round(r.left))}-${String(Math.round(r.right))} in ${String(Math.round(box.left))}-${String(Math.round(box.right))})`);
              break;
            }
          }
        }
        for (const el of [root, ...root.querySelectorAll('*')]) {
          if (!shown(el) || el instanceof SVGElement || scrolls(el) || ['inline', 'contents'].includes(getComputedStyle(el).display)) continue;
          if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) out.push(`${name(el)} holds ${String(el.scrollWidth)} px in ${String(el.clientWidth)}`);
          // A card's label is CSS content (td::before from data-label): its width against its longest word's.
          const before = getComputedStyle(el, '::before');
          if (el instanceof HTMLElement && el.dataset.label !== undefined && before.content !== 'none' && before.content !== 'normal') {
            const probe = document.createElement('span');
            probe.style.cssText = `position:absolute;visibility:hidden;white-space:nowrap;font:${before.font};letter-spacing:${before.letterSpacing}`;
            document.body.append(probe);
            const longest = Math.max(
              ...el.dataset.label.split(/[ ]+/).map((w) => {
                probe.textContent = w;
                return probe.getBoundingClientRect().width;
              }),
            );
            probe.remove();
            if (parseFloat(before.width) + 0.5 < longest) out.push(`the label "${el.dataset.label}" of ${name(el)} is ${before.width} wide, its longest word ${String(Math.round(longest))} px`);
          }
        }
        for (const svg of root.querySelectorAll('svg')) {
          if (!shown(svg)) continue;
          const frame = svg.getBoundingClientRect();
          const texts = [...svg.querySelectorAll('text')].map((t) => ({ text: t.textContent, box: t.getBoundingClientRect() })).filter((t) => t.box.width > 0);
          for (const [i, a] of texts.entries()) {
            if (a.box.left < frame.left - 1 || a.box.right > frame.right + 1 || a.box.top < frame.top - 1 || a.box.bottom > frame.bottom + 1) out.push(`chart text "${a.text}" past the chart's edge`);
            for (const b of texts.slice(i + 1)) {
              const w = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
              const h = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
              if (w > 1 && h > 1) out.push(`chart texts "${a.text}" and "${b.text}" overlap`);
            }
          }
        }
      }
      return out;
    },
    { roots, lang },
  );
}

/**
 * Every number the figures in `selectors` show, and those not written as the language writes
 * numbers (its digits, its decimal sign, its grouping sign only between groups of three), then
 * whether any two whole parts of four digits or more disagree on grouping ("8292" beside "35,020").
 */
function numberFaults(page: Page, selectors: string[], lang: string): Promise<{ numbers: string[]; faults: string[] }> {
  return page.evaluate(
    ({ selectors, lang }) => {
      const parts = new Intl.NumberFormat(lang).formatToParts(12345.6);
      const group = parts.find((p) => p.type === 'group')?.value ?? ',';
      const decimal = parts.find((p) => p.type === 'decimal')?.value ?? '.';
      const digits = Array.from({ length: 10 }, (_, i) => i).map((d) => new Intl.NumberFormat(lang, { useGrouping: false }).format(d)).join('');
      const d = `[${digits}0-9]`;
      const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const grouped = new RegExp(`^${d}{1,3}(${esc(group)}${d}{3})+(${esc(decimal)}${d}+)?$`);
      const plain = new RegExp(`^${d}+(${esc(decimal)}${d}+)?$`);
      const numbers: string[] = [];
      const faults: string[] = [];
      const styles = new Set<string>();
      const texts = selectors.flatMap((s) => [...document.querySelectorAll<HTMLElement>(s)]).filter((e) => e.closest('[hidden]') === null).map((e) => e.textContent.replace(/[\u2066-\u2069\u200e\u200f]/g, ''));
      for (const text of texts) {
        for (const m of text.matchAll(new RegExp(`${d}(?:[.,\u066b\u066c\u00a0\u202f']?${d})*`, 'g'))) {
          const n = m[0];
          numbers.push(n);
          if (!grouped.test(n) && !plain.test(n)) faults.push(`"${n}" (in "${text.trim().slice(0, 50)}") is not written as ${lang} writes numbers`);
          const whole = n.split(decimal)[0] ?? '';
          if (whole.replaceAll(group, '').length >= 4) styles.add(whole.includes(group) ? `grouped (${n})` : `ungrouped (${n})`);
        }
      }
      const kinds = new Set([...styles].map((s) => s.split(' ')[0]));
      if (kinds.size > 1) faults.push(`numbers grouped two ways: ${[...styles].join(', ')}`);
      return { numbers, faults };
    },
    { selectors, lang },
  );
}

const MAIN_ROOTS = ['header', 'main'];
const MAIN_FIGURES = ['#speed-results dd', '#speed-verdict', '#speed-live-rate', '#shared-results dd', '#history-table td:not(:first-child)', 'svg .tick', '#history-status'];
const MONITOR_ROOTS = ['header', 'main'];
const MONITOR_FIGURES = ['#monitor-checks .figures', '#monitor-runs td[data-column="result"]', 'svg .tick'];

describe.skipIf(!ready)('both pages laid out, at 390 and 1280 px, in English, Arabic and Japanese', () => {
  let browser: Browser;
  let server: TestServer;
  let monitor: MonitorProcess;
  let dir: string;
  let monitorUrl: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000', ...LOOPBACK_TRANSFERS });
    dir = mkdtempSync(join(tmpdir(), 'netdiag-layout-'));
    const db = join(dir, 'monitor.db');
    const port = await freePort();
    monitorUrl = `http://127.0.0.1:${String(port)}/`;
    const config = join(dir, 'monitor.yaml');
    // Checks whose next slot is a year away: the page shows the history written here, nothing runs.
    writeFileSync(config, `servers: [${server.url}]\ndatabase: ${db}\nlisten: 127.0.0.1:${String(port)}\nchecks:\n  - name: line speed\n    run: speedtest\n    cron: "0 0 1 1 *"\n    expect: { download_mbps: ">= 70% of 500" }\n  - name: both families\n    run: families\n    cron: "0 0 1 1 *"\n    expect: { ipv6: "= ok" }\n`);
    const store = await openStore(db);
    const speed = (daysAgo: number, download: number) => ({ check: 'line speed', server: server.url, startedAt: base - daysAgo * DAY, durationMs: 21_000, ok: true, error: null, breaches: download < 350 ? [`download_mbps ${String(download)} (expected >= 70% of 500)`] : [], source: 'monitor' as const, figures: { mode: 'full', download_mbps: download, upload_mbps: download / 2.3, latency_ms: 1.47, jitter_ms: 0.21, download_loaded_latency_ms: 2.4, upload_loaded_latency_ms: 2.1, loaded_latency_increase_ms: 0.93, bufferbloat_grade: 'A+', bufferbloat_meaning: 'calls and games do not notice a busy line', packet_loss_percent: null, streaming_quality: 'great' } });
    for (const [i, download] of [15_972.47, 9_840.2, 12.3, 14_210.9, 11_005.5].entries()) store.addRun(speed(5 - i, download));
    store.addRun({ check: 'line speed', server: server.url, startedAt: base - 0.5 * DAY, durationMs: 18_000, ok: false, error: 'the speed test failed: POST /__up answered 429 Too Many Requests', figures: {}, breaches: [], source: 'monitor' });
    for (const daysAgo of [3, 2, 1]) store.addRun({ check: 'both families', server: server.url, startedAt: base - daysAgo * DAY, durationMs: 800, ok: true, error: null, figures: { ipv4: 'ok', ipv6: 'unchecked', ipv4_ms: 1.23, ipv6_ms: null }, breaches: ['ipv6 unchecked (expected = ok)'], source: 'monitor' });
    store.setAlertState('both families', server.url, { streak: 3, alerting: true });
    store.close();
    monitor = startMonitor(config);
    await until('the monitor listening', () => monitor.lines.some((l) => l.includes(String(port))), 20_000, monitor.lines);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(LANGUAGES)("the monitor's page in %s: no word broken, nothing past its box, figures by name and unit in one number format, a chart with a legend and a time axis", async (lang) => {
    const words = catalogue(lang);
    const faults: string[] = [];
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`${monitorUrl}?lang=${lang}`);
      await page.waitForSelector('#monitor-charts svg polyline');
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForFunction((w) => Math.abs(Number(document.querySelector('#monitor-charts svg')?.getAttribute('viewBox')?.split(' ')[2]) - (document.querySelector('#monitor-charts svg')?.getBoundingClientRect().width ?? 0)) < 2 && window.innerWidth === w, width);
        await page.screenshot({ path: `${SHOTS}/layout-monitor-${lang}-${String(width)}.png`, fullPage: true });
        faults.push(...(await layoutFaults(page, MONITOR_ROOTS, lang)).map((f) => `${String(width)} px: ${f}`));
        const numbers = await numberFaults(page, MONITOR_FIGURES, lang);
        faults.push(...numbers.faults.map((f) => `${String(width)} px: ${f}`));
        expect.soft(numbers.numbers.length, 'numbers read from the figures').toBeGreaterThan(10);
        // "Speed over time": a legend naming each line the chart draws, in its colour, and a time axis of dates.
        const chart = await page.$eval('#monitor-charts figure', (figure) => ({
          lines: [...new Set([...figure.querySelectorAll('polyline.trend')].map((l) => l.getAttribute('class')?.replace('trend', '').trim()))].sort(),
          keys: [...figure.querySelectorAll('.key')].map((k) => ({ swatch: k.querySelector('.swatch')?.className.replace('swatch', '').trim(), text: k.textContent.trim(), colour: getComputedStyle(k.querySelector('.swatch') as Element).backgroundColor })),
          strokes: Object.fromEntries([...figure.querySelectorAll('polyline.trend')].map((l) => [l.getAttribute('class')?.replace('trend', '').trim(), getComputedStyle(l).stroke])) as Record<string, string>,
          times: [...figure.querySelectorAll('svg text.time')].map((t) => t.textContent),
        }));
        expect.soft(chart.lines.length).toBeGreaterThanOrEqual(3);
        expect.soft(chart.keys.map((k) => k.swatch).sort()).toEqual(chart.lines);
        for (const key of chart.keys) {
          expect.soft(key.text).not.toBe('');
          expect.soft(key.colour, `the legend's ${key.text} in its line's colour`).toBe(chart.strokes[key.swatch ?? '']);
        }
        expect.soft(chart.times.length).toBeGreaterThanOrEqual(2);
        for (const time of chart.times) expect.soft(time).toMatch(/[0-9\u0660-\u0669]/);
      }
      // Figures by the page's names for them, never the JSON's keys.
      const shown = (await page.$$eval('#monitor-checks .figures, #monitor-runs td[data-column="result"]', (cells) => cells.map((c) => c.textContent))).join('\n');
      expect.soft(shown).not.toMatch(/[a-z]+_[a-z]+/);
      expect.soft(shown).toContain(words['speed.download']);
      expect.soft(shown).toContain(words['families.not-checked']);
    } finally {
      await context.close();
    }
    expect(faults, `\n${faults.join("\n")}\n`).toEqual([]);
  }, 60_000);

  it.each(LANGUAGES)('the main page in %s, during and after a light test and as a shared fast result: no word broken, nothing past its box, one number format', async (lang) => {
    const faults: string[] = [];
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/?lang=${lang}`);
      await page.evaluate((kept) => {
        localStorage.setItem('netdiag.history', JSON.stringify({ v: 1, results: kept }));
      }, KEPT.map((r) => encodeResult(r)));
      await page.reload();
      await page.waitForSelector('#speed-start:not([disabled])');
      await page.selectOption('#speed-mode', 'light');
      await page.click('#speed-start');
      // The live heading as it runs, on a phone: whole words on at most two lines.
      await page.waitForSelector('#speed-live-rate[data-direction]', { timeout: 60_000 });
      await page.screenshot({ path: `${SHOTS}/layout-main-live-${lang}-390.png` });
      const live = await page.$eval('#speed-live-rate', (rate) => {
        const range = document.createRange();
        range.selectNodeContents(rate);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        return { text: rate.textContent, lines: tops.size };
      });
      expect.soft(live.lines, `the live heading "${live.text}"`).toBeLessThanOrEqual(2);
      faults.push(...(await layoutFaults(page, ['#speed-live'], lang)).map((f) => `live, 390 px: ${f}`));
      await expect.poll(() => page.textContent('#speed-status'), { timeout: 90_000, interval: 250 }).toBe(catalogue(lang)['speed.done']);
      await page.$eval('#speed-details', (d) => ((d as HTMLDetailsElement).open = true));
      for (const [what, url] of [
        ['after a test', undefined],
        ['a shared result', `${server.url}/?lang=${lang}#r=${encodeResult(FAST)}`],
      ] as const) {
        if (url !== undefined) {
          // Only the fragment differs from the page open: a reload reads it as a link opened anew.
          await page.goto(url);
          await page.reload();
          await page.waitForSelector('#shared-results:not([hidden])');
          await page.waitForSelector('#history-chart polyline');
        }
        for (const width of [...WIDTHS].reverse()) {
          await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
          await page.waitForFunction((w) => window.innerWidth === w, width);
          await page.waitForTimeout(100);
          const shot = what === 'after a test' ? 'result' : 'shared';
          await page.screenshot({ path: `${SHOTS}/layout-main-${shot}-${lang}-${String(width)}.png`, fullPage: true });
          faults.push(...(await layoutFaults(page, MAIN_ROOTS, lang)).map((f) => `${what}, ${String(width)} px: ${f}`));
          const numbers = await numberFaults(page, MAIN_FIGURES, lang);
          faults.push(...numbers.faults.map((f) => `${what}, ${String(width)} px: ${f}`));
          expect.soft(numbers.numbers.length).toBeGreaterThan(10);
        }
      }
    } finally {
      await context.close();
    }
    expect(faults, `\n${faults.join("\n")}\n`).toEqual([]);
  }, 150_000);
});
