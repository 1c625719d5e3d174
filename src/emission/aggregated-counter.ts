import type { Attributes, Meter, MetricOptions, ObservableResult } from '@opentelemetry/api';
import { ATTR_OTEL_METRIC_OVERFLOW } from '../semconv.js';

/** The SDK's default cardinality limit per metric stream. */
const DEFAULT_MAX_SERIES = 2000;

interface Series {
  readonly attributes: Attributes;
  value: number;
}

type Level = Map<string, Level | Series>;

/** One counter per meter and name: instruments of the same name on one meter are one stream. */
const shared = new WeakMap<Meter, Map<string, AggregatedCounter>>();

/**
 * The counter `name` of `meter`, made on first use. Two users of one meter (two processors
 * given the same `MeterProvider`) add into the same sums, as they would with the SDK's
 * synchronous counters; two observable instruments of one name would instead report the same
 * attribute sets twice, and the SDK would keep only one of them.
 */
export function aggregatedCounter(
  meter: Meter,
  name: string,
  options: MetricOptions,
  keys: readonly string[],
  kind: 'monotonic' | 'up_down' = 'monotonic',
): AggregatedCounter {
  let byName = shared.get(meter);
  if (byName === undefined) {
    byName = new Map();
    shared.set(meter, byName);
  }
  let counter = byName.get(name);
  if (counter === undefined) {
    counter = new AggregatedCounter(meter, name, options, keys, kind);
    byName.set(name, counter);
  }
  return counter;
}

/**
 * A counter summed in process, per attribute set, and reported through an observable
 * instrument when a reader collects. The SDK's synchronous `add` hashes the attribute set (its
 * keys sorted, then serialised) on every call, ~1.5 µs, and the processor adds several times
 * per agent run on the application's hot path. Here an add walks nested maps keyed by the
 * attribute values, in the order of `keys` (strings whose hashes are cached), and the
 * exported data is the same: one cumulative sum per attribute set, read at collection.
 *
 * Series are bounded as the SDK bounds them by default: past `maxSeries` attribute sets,
 * adds go to one series with `otel.metric.overflow: true`, so hostile span data (agent or
 * tool names) cannot grow memory.
 */
export class AggregatedCounter {
  private readonly _root: Level = new Map();
  private readonly _series: Series[] = [];
  /** Seeded series whose attribute sets lack some of `keys`, by their canonical form. */
  private readonly _partial = new Map<string, Series>();
  private _overflow: Series | undefined;
  /** The one series of a counter without attributes. */
  private _only: Series | undefined;

  constructor(
    meter: Meter,
    name: string,
    options: MetricOptions,
    private readonly _keys: readonly string[],
    kind: 'monotonic' | 'up_down' = 'monotonic',
    private readonly _maxSeries = DEFAULT_MAX_SERIES,
  ) {
    // `add` takes the values as up to five arguments (no array per call).
    if (_keys.length > 5) throw new Error(`AggregatedCounter ${name}: at most 5 attribute keys`);
    const instrument =
      kind === 'monotonic'
        ? meter.createObservableCounter(name, options)
        : meter.createObservableUpDownCounter(name, options);
    instrument.addCallback((result) => this._observe(result));
  }

  /** Adds `value` to the series of these attribute values, given in the order of `keys`. */
  add(value: number, a?: string, b?: string, c?: string, d?: string, e?: string): void {
    const series = this._find(a, b, c, d, e);
    series.value += value;
  }

  /**
   * Creates a series at 0 (the zero series a policy implies, so that Prometheus' `increase()`
   * sees the first failure). `attributes` may hold fewer keys than `keys`: such a series is
   * its own, never reached by `add`.
   */
  seed(attributes: Attributes): void {
    const full =
      Object.keys(attributes).length === this._keys.length &&
      this._keys.every((key) => typeof attributes[key] === 'string');
    if (full) {
      const value = (index: number) => attributes[this._keys[index]!] as string | undefined;
      this._find(value(0), value(1), value(2), value(3), value(4));
      return;
    }
    const canonical = JSON.stringify(Object.entries(attributes).sort(([x], [y]) => (x < y ? -1 : 1)));
    if (this._partial.has(canonical)) return;
    let series: Series;
    if (this._room()) {
      series = { attributes: { ...attributes }, value: 0 };
      this._series.push(series);
    } else series = this._overflowSeries();
    this._partial.set(canonical, series);
  }

  private _find(a?: string, b?: string, c?: string, d?: string, e?: string): Series {
    const depth = this._keys.length;
    if (depth === 0) {
      this._only ??= this._create();
      return this._only;
    }
    let node: Level | Series = this._root;
    for (let index = 0; index < depth; index++) {
      const key = valueAt(index, a, b, c, d, e);
      const level = node as Level;
      let next = level.get(key);
      if (next === undefined) {
        if (!this._room()) return this._overflowSeries();
        next = index === depth - 1 ? this._create(a, b, c, d, e) : new Map();
        level.set(key, next);
      }
      node = next;
    }
    return node as Series;
  }

  private _create(a?: string, b?: string, c?: string, d?: string, e?: string): Series {
    const attributes: Attributes = {};
    const keys = this._keys;
    for (let index = 0; index < keys.length; index++)
      attributes[keys[index]!] = valueAt(index, a, b, c, d, e);
    const series: Series = { attributes, value: 0 };
    this._series.push(series);
    return series;
  }

  private _room(): boolean {
    // One place stays for the overflow series, as in the SDK.
    return this._series.length < this._maxSeries - 1;
  }

  private _overflowSeries(): Series {
    this._overflow ??= { attributes: { [ATTR_OTEL_METRIC_OVERFLOW]: true }, value: 0 };
    return this._overflow;
  }

  private _observe(result: ObservableResult): void {
    const series = this._series;
    for (let index = 0; index < series.length; index++) {
      const one = series[index]!;
      result.observe(one.value, one.attributes);
    }
    if (this._overflow !== undefined) result.observe(this._overflow.value, this._overflow.attributes);
  }
}

/** The attribute value at `index` of an add's arguments; a missing one is the empty string. */
function valueAt(index: number, a?: string, b?: string, c?: string, d?: string, e?: string): string {
  return (index === 0 ? a : index === 1 ? b : index === 2 ? c : index === 3 ? d : e) ?? '';
}
