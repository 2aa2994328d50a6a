// config.distributed.syncBatchNorm: every batch norm layer of the model
// becomes a syncBatchNorm before it is built, as
// torch.nn.SyncBatchNorm.convert_sync_batchnorm does (Lightning's
// sync_batchnorm). Same options, parameters and buffers: weights load as before.
import { firebrandError } from '../errors';
import type { ModelSpec } from './model-spec';
import type { ModuleNode } from './module/tracer';

const BATCH_NORMS = new Set(['batchNorm1d', 'batchNorm2d', 'batchNorm3d']);

/** `spec` with its batch norm layers converted (a copy; `spec` is unchanged). */
export function withSyncBatchNorm(spec: ModelSpec): ModelSpec {
  if (spec.type !== 'graph') {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `distributed.syncBatchNorm: the layers of a ${spec.type} model cannot be converted (only models written ` +
        'with nn layers can); use a model of nn layers, or set syncBatchNorm: false',
    );
  }
  return { ...spec, modules: converted(spec.modules) };
}

function converted(node: ModuleNode): ModuleNode {
  const children = node.children.map(({ name, module }) => ({ name, module: converted(module) }));
  if (node.layer === undefined || !BATCH_NORMS.has(String(node.layer.type))) return { ...node, children };
  return { ...node, className: 'SyncBatchNorm', layer: { ...node.layer, type: 'syncBatchNorm' }, children };
}
