import type {
  Attributes,
  Counter,
  Histogram,
  Meter,
  MeterProvider,
  MetricOptions,
  ObservableCallback,
  ObservableCounter,
  ObservableResult,
  ObservableUpDownCounter,
  UpDownCounter,
} from '@opentelemetry/api';
import { createNoopMeter } from '@opentelemetry/api';

type Kind = 'counter' | 'gauge' | 'histogram';

interface Family {
  name: string;
  help: string;
  kind: Kind;
  series: Map<string, Series>;
  buckets?: readonly number[];
}

interface Series {
  labels: string;
  value: number;
  /** Histograms: per-bucket counts (not cumulative), then sum and count. */
  counts?: number[];
  sum?: number;
  count?: number;
}

/**
 * A small Prometheus text-format registry: the gateway's own counters and, through
 * `meterProvider`, toolwatch's OpenTelemetry instruments (so `ToolwatchMetrics` is reused
 * unchanged). The SDK's Prometheus exporter is not a runtime dependency of toolwatch; the
 * gateway needs counters, gauges and one histogram, which this covers.
 */
export class PrometheusRegistry {
  private readonly _families = new Map<string, Family>();
  /** Observable instruments' callbacks, run before every read: their values are set, not added. */
  private readonly _observers: Array<() => void> = [];

  counter(name: string, help: string): (labels?: Attributes, value?: number) => void {
    const family = this._family(name, help, 'counter');
    return (labels = {}, value = 1) => {
      if (!(value >= 0)) return;
      this._series(family, labels).value += value;
    };
  }

  /** A gauge read when scraped. */
  gauge(name: string, help: string, read: () => number, labels: Attributes = {}): void {
    const family = this._family(name, help, 'gauge');
    const series = this._series(family, labels);
    Object.defineProperty(series, 'value', { get: read, enumerable: true });
  }

  upDown(name: string, help: string): (labels?: Attributes, value?: number) => void {
    const family = this._family(name, help, 'gauge');
    return (labels = {}, value = 1) => {
      this._series(family, labels).value += value;
    };
  }

  histogram(
    name: string,
    help: string,
    buckets: readonly number[],
  ): (value: number, labels?: Attributes) => void {
    const family = this._family(name, help, 'histogram');
    family.buckets = buckets;
    return (value, labels = {}) => {
      const series = this._series(family, labels);
      series.counts ??= new Array(buckets.length + 1).fill(0);
      let i = 0;
      while (i < buckets.length && value > buckets[i]!) i++;
      series.counts[i]!++;
      series.sum = (series.sum ?? 0) + value;
      series.count = (series.count ?? 0) + 1;
    };
  }

  /**
   * A counter or gauge whose values are observed when the registry is read (OpenTelemetry's
   * observable instruments): each callback reports current totals, which replace the series'.
   */
  observable(name: string, help: string, kind: 'counter' | 'gauge'): ObservableCounter {
    const family = this._family(name, help, kind);
    const callbacks = new Set<ObservableCallback>();
    const result: ObservableResult = {
      observe: (value: number, attributes: Attributes = {}) => {
        this._series(family, attributes).value = value;
      },
    };
    this._observers.push(() => {
      for (const callback of callbacks) void callback(result);
    });
    return {
      addCallback: (callback: ObservableCallback) => callbacks.add(callback),
      removeCallback: (callback: ObservableCallback) => callbacks.delete(callback),
    } as ObservableCounter;
  }

  /** Current value of one counter or gauge series (tests and benches). */
  value(name: string, labels: Attributes = {}): number {
    this._observe();
    return this._families.get(name)?.series.get(labelText(labels))?.value ?? 0;
  }

  /** Sum over every series of a family. */
  total(name: string): number {
    this._observe();
    let sum = 0;
    for (const s of this._families.get(name)?.series.values() ?? []) sum += s.value;
    return sum;
  }

  text(): string {
    this._observe();
    const lines: string[] = [];
    for (const f of this._families.values()) {
      lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      lines.push(`# TYPE ${f.name} ${f.kind}`);
      for (const s of f.series.values()) {
        if (f.kind !== 'histogram') {
          lines.push(`${f.name}${s.labels ? `{${s.labels}}` : ''} ${formatNumber(s.value)}`);
          continue;
        }
        let cumulative = 0;
        const counts = s.counts ?? [];
        const sep = s.labels ? `${s.labels},` : '';
        f.buckets!.forEach((le, i) => {
          cumulative += counts[i] ?? 0;
          lines.push(`${f.name}_bucket{${sep}le="${formatNumber(le)}"} ${cumulative}`);
        });
        lines.push(`${f.name}_bucket{${sep}le="+Inf"} ${s.count ?? 0}`);
        lines.push(`${f.name}_sum${s.labels ? `{${s.labels}}` : ''} ${formatNumber(s.sum ?? 0)}`);
        lines.push(`${f.name}_count${s.labels ? `{${s.labels}}` : ''} ${s.count ?? 0}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }

  /** A `MeterProvider` whose counters, up-down counters and histograms land in this registry. */
  meterProvider(): MeterProvider {
    const meter = Object.create(createNoopMeter()) as Meter;
    meter.createCounter = (name: string, options?: MetricOptions) => {
      const add = this.counter(`${promName(name, options?.unit)}_total`, options?.description ?? name);
      return { add: (value: number, attributes?: Attributes) => add(attributes, value) } as Counter;
    };
    meter.createUpDownCounter = (name: string, options?: MetricOptions) => {
      const add = this.upDown(promName(name, options?.unit), options?.description ?? name);
      return { add: (value: number, attributes?: Attributes) => add(attributes, value) } as UpDownCounter;
    };
    meter.createObservableCounter = (name: string, options?: MetricOptions) =>
      this.observable(`${promName(name, options?.unit)}_total`, options?.description ?? name, 'counter');
    meter.createObservableUpDownCounter = (name: string, options?: MetricOptions) =>
      this.observable(
        promName(name, options?.unit),
        options?.description ?? name,
        'gauge',
      ) as ObservableUpDownCounter;
    meter.createHistogram = (name: string, options?: MetricOptions) => {
      const buckets = options?.advice?.explicitBucketBoundaries ?? [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];
      const record = this.histogram(promName(name, options?.unit), options?.description ?? name, buckets);
      return { record: (value: number, attributes?: Attributes) => record(value, attributes) } as Histogram;
    };
    return { getMeter: () => meter };
  }

  private _observe(): void {
    for (const observe of this._observers) observe();
  }

  private _family(name: string, help: string, kind: Kind): Family {
    let family = this._families.get(name);
    if (!family) {
      family = { name, help, kind, series: new Map() };
      this._families.set(name, family);
    }
    return family;
  }

  private _series(family: Family, labels: Attributes): Series {
    const key = labelText(labels);
    let series = family.series.get(key);
    if (!series) {
      series = { labels: key, value: 0 };
      family.series.set(key, series);
    }
    return series;
  }
}

/** OpenTelemetry instrument name → Prometheus name, as the OTel Prometheus exporter maps it. */
function promName(name: string, unit: string | undefined): string {
  const base = name.replace(/[^a-zA-Z0-9_:]/g, '_');
  // Annotation units (`{event}`) and the dimensionless `1` add no suffix.
  if (!unit || unit.startsWith('{') || unit === '1') return base;
  return `${base}_${unit.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}

function labelText(labels: Attributes): string {
  const keys = Object.keys(labels).sort();
  let out = '';
  for (const key of keys) {
    const value = labels[key];
    if (value === undefined) continue;
    const text = String(Array.isArray(value) ? value.join(',') : value)
      .replace(/\\/g, '\\\\')
      .replace(/\n/g, '\\n')
      .replace(/"/g, '\\"');
    out += `${out ? ',' : ''}${key.replace(/[^a-zA-Z0-9_]/g, '_')}="${text}"`;
  }
  return out;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(n);
}
