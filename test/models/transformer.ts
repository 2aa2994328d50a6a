// nn.transformerEncoder, nn.transformerEncoderLayer and nn.transformerDecoderLayer:
// the same class as TransformerModel in scripts/make-module-fixtures.py.
import { EmbeddingSpec, Layer, LinearSpec, nn, Tensor, torch } from '../../src';

export class TransformerModel extends nn.Module {
  embed: Layer<EmbeddingSpec> = nn.embedding(12, 8);
  encoder = nn.transformerEncoder(nn.transformerEncoderLayer(8, 2, { dimFeedforward: 16, dropout: 0 }), 2, {
    norm: nn.layerNorm(8),
  });
  decoder = nn.transformerDecoderLayer(8, 2, { dimFeedforward: 16, dropout: 0, activation: 'gelu', normFirst: true });
  head: Layer<LinearSpec> = nn.linear(8, 3);

  forward(tokens: Tensor): Tensor {
    const x = this.embed.forward(tokens).transpose(0, 1);
    const length = tokens.size(1);
    const pad = tokens.eq(0).mul(torch.arange(length).gt(0));
    const memory = this.encoder.forward(x, { srcKeyPaddingMask: pad });
    const causal = torch.full([length, length], 1, 'bool').triu(1);
    const y = this.decoder.forward(x, memory, { tgtMask: causal, memoryKeyPaddingMask: pad });
    return this.head.forward(y.mean(0));
  }
}
