// config.json's hidden_act, as transformers' ACT2FN maps it, for the
// architectures that take it from their config (BERT, ViT).
import { firebrandError } from '../../errors';
import { F } from '../../nn/module/functional';
import type { Tensor } from '../../nn/module/tensor';

const ACTIVATIONS: Record<string, (x: Tensor) => Tensor> = {
  gelu: (x) => F.gelu(x),
  gelu_new: (x) => F.gelu(x, 'tanh'),
  gelu_pytorch_tanh: (x) => F.gelu(x, 'tanh'),
  relu: (x) => F.relu(x),
  silu: (x) => F.silu(x),
  swish: (x) => F.silu(x),
};

/** The activation config.json's hidden_act names, or an error listing the ones there are. */
export function hiddenActivation(name: string): (x: Tensor) => Tensor {
  const activation = ACTIVATIONS[name];
  if (activation === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `config.json: hidden_act '${name}' is not supported; supported: ${Object.keys(ACTIVATIONS).join(', ')}`,
    );
  }
  return activation;
}
