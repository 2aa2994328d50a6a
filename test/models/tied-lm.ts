// A small language model whose embedding and output head are one tensor, tied
// in nanoGPT's direction (the embedding takes the head's weight): the same
// class as TiedLM in scripts/make-module-fixtures.py.
import { F, nn, Tensor } from '../../src';

export class TiedLM extends nn.Module {
  embed = nn.embedding(16, 8);
  mix = nn.linear(8, 8);
  norm = nn.layerNorm(8);
  head = nn.linear(8, 16, { bias: false });

  constructor() {
    super();
    this.embed.weight = this.head.weight;
  }

  /** Token ids [batch, time] to logits [batch, vocabulary, time], as cross_entropy takes them. */
  forward(tokens: Tensor): Tensor {
    const x = this.embed.forward(tokens);
    const h = x.add(F.gelu(this.mix.forward(x)));
    return this.head.forward(this.norm.forward(h)).transpose(1, 2);
  }
}
