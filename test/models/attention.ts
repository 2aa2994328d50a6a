// nn.multiheadAttention twice: the same class as AttentionClassifier in
// scripts/make-module-fixtures.py.
import { EmbeddingSpec, Layer, LinearSpec, nn, Tensor, torch } from '../../src';

export class AttentionClassifier extends nn.Module {
  embed: Layer<EmbeddingSpec> = nn.embedding(12, 8, { paddingIdx: 0 });
  attn = nn.multiheadAttention(8, 2, { batchFirst: true });
  cross = nn.multiheadAttention(8, 2, { bias: false });
  head: Layer<LinearSpec> = nn.linear(8, 3);

  /** Batch-first self-attention (padding and causal masks), then sequence-first cross-attention with its weights. */
  forward(tokens: Tensor): Tensor {
    const x = this.embed.forward(tokens);
    const length = tokens.size(1);
    const pad = tokens.eq(0).mul(torch.arange(length).gt(0));
    const causal = torch.full([length, length], 1, 'bool').triu(1);
    const [y] = this.attn.forward(x, x, x, { keyPaddingMask: pad, attnMask: causal });
    const [z, weights] = this.cross.forward(y.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), {
      needWeights: true,
    });
    return this.head.forward(z.mean(0).add(weights!.sum(-1).mean(-1, true)));
  }
}
