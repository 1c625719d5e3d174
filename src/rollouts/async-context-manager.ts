import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, context, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * A context manager on `AsyncLocalStorage` (what `@opentelemetry/context-async-hooks`
 * provides, which toolwatch does not depend on): without one, `context.active()` is always
 * the root context and an agent's spans would not be children of its rollout span.
 */
class AsyncLocalStorageContext implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** Installs a propagating context manager unless one already propagates. */
export function ensureContextPropagation(): void {
  const probe = ROOT_CONTEXT.setValue(Symbol('toolwatch.probe'), true);
  if (context.with(probe, () => context.active() === probe)) return;
  context.disable();
  context.setGlobalContextManager(new AsyncLocalStorageContext());
}
