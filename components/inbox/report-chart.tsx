'use client';
import { Group } from '@visx/group';
import { scaleBand, scaleLinear } from '@visx/scale';
import { Bar } from '@visx/shape';
import styles from './reports.module.css';

export type ChartBar = { label: string; value: number | null; text: string };

const WIDTH = 640;
const HEIGHT = 200;
const MARGIN = { top: 10, right: 8, bottom: 34, left: 48 };

/**
 * One figure per group as SVG bars (@visx/scale and @visx/shape; why visx: docs/architecture.md#reports-page).
 * The SVG scales to its box (viewBox), so it never widens a phone's page. It is one image to a
 * screen reader, described by its caption; each bar's value is in its tooltip (`<title>`) and, for
 * everyone, in the table under the chart, which holds the same figures.
 */
export function ReportChart({ caption, bars, unit }: { caption: string; bars: ChartBar[]; unit: string }) {
  const innerW = WIDTH - MARGIN.left - MARGIN.right;
  const innerH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const max = Math.max(0, ...bars.map((b) => b.value ?? 0));
  const x = scaleBand<string>({ domain: bars.map((_, i) => String(i)), range: [0, innerW], padding: 0.2 });
  const y = scaleLinear<number>({ domain: [0, max || 1], range: [innerH, 0], nice: true });
  const ticks = y.ticks(4);
  // Labels under the bars: every one when they fit, else every n-th.
  const every = Math.max(1, Math.ceil(bars.length / 12));
  const drawn = bars.filter((b) => b.value !== null && b.value > 0).length;
  return (
    <figure className={styles.figure}>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        className={styles.chart}
        role="img"
        aria-label={`${caption}: a bar chart of ${bars.length} ${bars.length === 1 ? 'group' : 'groups'}, the same figures as the table below`}
        data-bars={drawn}
      >
        <Group left={MARGIN.left} top={MARGIN.top}>
          {ticks.map((t) => (
            <g key={t} transform={`translate(0, ${y(t)})`} className={styles.tick}>
              <line x1={0} x2={innerW} />
              <text x={-6} dy="0.32em" textAnchor="end">
                {t}
              </text>
            </g>
          ))}
          {bars.map((b, i) => {
            const value = b.value ?? 0;
            const top = y(value);
            return (
              <g key={i}>
                {value > 0 ? (
                  <Bar
                    className={styles.bar}
                    x={x(String(i))}
                    y={top}
                    width={x.bandwidth()}
                    height={innerH - top}
                    data-value={value}
                  >
                    <title>{`${b.label}: ${b.text}`}</title>
                  </Bar>
                ) : null}
                {i % every === 0 ? (
                  <text className={styles.label} x={(x(String(i)) ?? 0) + x.bandwidth() / 2} y={innerH + 16} textAnchor="middle">
                    {b.label.length > 12 ? `${b.label.slice(0, 11)}…` : b.label}
                  </text>
                ) : null}
              </g>
            );
          })}
        </Group>
        <text className={styles.unit} x={4} y={HEIGHT - 4}>
          {unit}
        </text>
      </svg>
      <figcaption className={styles.caption}>{caption}</figcaption>
    </figure>
  );
}
