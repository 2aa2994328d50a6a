// Deep copies of modules with the same initial values, as PyTorch's
// copy.deepcopy makes them (nn.TransformerEncoder's layers): new submodules,
// parameters and buffers; C++ builds the copy's layers without drawing random
// numbers and copies the original's values into it at the point the copy was made.
import { firebrandError } from '../../errors';
import { Buffer, BuiltinLayer, markConstructed, Module, nextConstruction, Parameter } from './module';

/** Each copy's original and when the copy was made (its values are the original's as of then). */
const copies = new WeakMap<Module, { original: Module; construction: number }>();
/** Built-in layers inside a copy: their own initialisation is overwritten by the copy. */
const copiedLayers = new WeakSet<Module>();

/** @internal The original of a module made by cloneModule, with the copy's construction number. */
export const copyOf = (module: Module): { original: Module; construction: number } | undefined => copies.get(module);
/** @internal Whether a layer belongs to a copy (it draws no initialisation of its own). */
export const isCopiedLayer = (layer: Module): boolean => copiedLayers.has(layer);

/** A deep copy of `original`: the same classes, options and (once built) values; plain fields are shared. */
export function cloneModule<M extends Module>(original: M): M {
  const made = new Map<object, object>();
  const copyValue = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    const earlier = made.get(value);
    if (earlier) return earlier;
    if (value instanceof Module) return copyModule(value);
    if (value instanceof Parameter) {
      if (value.ofLayer) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `${original.className}: a module holding another layer's tensor cannot be copied`,
        );
      }
      return remember(value, new Parameter(value.shape, { requiresGrad: value.requiresGrad, dtype: value.dtype }));
    }
    if (value instanceof Buffer)
      return remember(value, new Buffer(value.shape, { dtype: value.dtype, fill: value.fill, data: value.data }));
    return value;
  };
  const remember = <T extends object>(from: object, copy: T): T => {
    made.set(from, copy);
    return copy;
  };
  const copyModule = (module: Module): Module => {
    const copy = remember(module, Object.create(Object.getPrototypeOf(module) as object) as Module);
    markConstructed(copy);
    for (const key of Reflect.ownKeys(module)) {
      const descriptor = Object.getOwnPropertyDescriptor(module, key) as PropertyDescriptor;
      if (module instanceof BuiltinLayer && (key === 'tensors' || key === 'ties')) {
        // The copy's own handles for nn.init; ties stay inside the copy when they were inside the original.
        const entries =
          key === 'ties'
            ? [...(descriptor.value as Map<string, Parameter>)].map(([name, tensor]) => [name, copyValue(tensor)])
            : [];
        descriptor.value = new Map(entries as [string, Parameter][]);
      } else if ('value' in descriptor) {
        descriptor.value = copyValue(descriptor.value);
      }
      Object.defineProperty(copy, key, descriptor);
    }
    if (module instanceof BuiltinLayer) copiedLayers.add(copy);
    return copy;
  };
  const copy = copyModule(original) as M;
  copies.set(copy, { original, construction: nextConstruction() });
  return copy;
}
