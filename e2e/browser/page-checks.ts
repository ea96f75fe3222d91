import AxeBuilder from '@axe-core/playwright';
import { expect, type Page, type TestInfo } from '@playwright/test';

/**
 * Checks the accessibility and phone specs share: axe-core's WCAG A/AA rules (2.0 to 2.2), the
 * page fitting its viewport, a visible focus ring, and a screenshot kept with the test's results.
 */

const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** No serious or critical axe violation on the page as it is now (a failure names each rule and its first elements). */
export async function expectNoSeriousViolations(page: Page, where: string) {
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_AA).analyze();
  const serious = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 4)
          .map((n) => n.target.join(' '))
          .join(' | ')}`,
    );
  expect(serious, `axe on ${where}`).toEqual([]);
}

/**
 * Nothing wider than the viewport: the document does not scroll sideways, and no visible element
 * (those scrolled inside a region included) ends past its right edge, where it would be cut off.
 */
export async function expectFitsViewport(page: Page, where: string) {
  const found = await page.evaluate(() => {
    const width = window.innerWidth;
    const wider: string[] = [];
    for (const el of document.body.querySelectorAll<HTMLElement>('*')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
      if (box.right > width + 0.5) {
        const text = (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40);
        wider.push(`<${el.tagName.toLowerCase()}> "${text}" ends at ${Math.round(box.right)}px`);
      }
    }
    return { width, scrollWidth: document.documentElement.scrollWidth, wider: wider.slice(0, 10) };
  });
  expect(found.scrollWidth, `${where}: the page scrolls sideways`).toBeLessThanOrEqual(found.width);
  expect(found.wider, `${where}: elements past the ${found.width}px viewport`).toEqual([]);
}

/**
 * What the focused element shows: whether its outline or box-shadow (the focus ring) is there, a
 * name for messages, and (`track`: remembered across calls) whether the focus was on it before, as
 * when a Tab loop came round.
 */
export async function focusRing(page: Page, track = false): Promise<{ name: string; visible: boolean; repeat: boolean } | null> {
  return page.evaluate((track) => {
    const el = document.activeElement as (HTMLElement & { focusSeen?: boolean }) | null;
    if (!el || el === document.body) return null;
    const style = getComputedStyle(el);
    const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1;
    const name = `<${el.tagName.toLowerCase()}> ${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 30)}`;
    const repeat = el.focusSeen === true;
    if (track) el.focusSeen = true;
    return { name, visible: outline || style.boxShadow !== 'none', repeat };
  }, track);
}

/** A screenshot attached to the test's report, to compare layouts by eye (nothing asserts on pixels). */
export async function keepScreenshot(page: Page, testInfo: TestInfo, name: string) {
  await testInfo.attach(name, { body: await page.screenshot(), contentType: 'image/png' });
}
